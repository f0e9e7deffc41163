# The charts and the comparison with QuestDB's published benchmark, drawn from a results folder's
# summary.csv and environment.json only (never a run file): a change of the drawing code or of
# the `charts` settings reruns these rules and nothing else. Shared by the workflow (RESULTS is
# the experiment's folder) and by reference/Snakefile (RESULTS is a committed reference run).

# The chart list, from a light module: parsing the workflow does not load matplotlib.
from ingestbench.charts.registry import report_charts
from ingestbench.workflow.rule_inputs import chart_settings


report: "../report/workflow.rst"


# A rule per chart of the registry drawn from a summary.
for _chart, _entry in report_charts("summary").items():

    rule:
        name:
            f"chart_{_chart}"
        input:
            summary=f"{RESULTS}/summary.csv",
            environment=f"{RESULTS}/environment.json",
        output:
            png=report(
                f"{RESULTS}/plots/{_chart}.png",
                caption=f"../report/{_chart}.rst",
                category="Charts",
                subcategory=_entry.title,
            ),
            svg=f"{RESULTS}/plots/{_chart}.svg",
        log:
            f"{RESULTS}/logs/plots/{_chart}.log",
        localrule: True
        conda:
            "../envs/ingestbench.yaml"
        params:
            settings={"chart": _chart, **chart_settings(config)},
            code=script_code("plot.py"),
        script:
            "../scripts/plot.py"


# QuestDB's published pandas benchmark (figures in ingestbench/results/published.py) next to this
# run's variants of the same shape; configs/published.yaml runs all of them.
rule published_comparison:
    input:
        summary=f"{RESULTS}/summary.csv",
    output:
        f"{RESULTS}/published_comparison.md",
    log:
        f"{RESULTS}/logs/published_comparison.log",
    localrule: True
    conda:
        "../envs/ingestbench.yaml"
    params:
        settings={},
        code=script_code("published_comparison.py"),
    script:
        "../scripts/published_comparison.py"
