"""The seaborn charts of a run: which charts exist, the data each one draws, and how they look.

- `registry`: every chart of the report and the page, once: its title, source and the functions
  that draw it (light: the Snakefile reads it at parse time).
- `data`: the summary rows a chart plots, and labels (machine, rows).
- `style`: palette, markers and the figure's frame, shared by every chart.
- `draw`: one drawing function per chart of a summary, named in the registry.

May import: storage.files, results and variants (the libraries and methods charts group by).
"""
