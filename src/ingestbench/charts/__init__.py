"""The seaborn charts of a run: which charts exist, the data each one draws, and how they look.

- `registry`: every chart's name and title (light: the Snakefile reads it at parse time).
- `data`: the summary rows a chart plots, and labels (machine, rows).
- `style`: palette, markers and the figure's frame, shared by every chart.
- `draw`: one drawing function per chart, registered under its name.

May import: storage.files, results and variants (the libraries and methods charts group by).
"""
