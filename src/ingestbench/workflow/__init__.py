"""The seams between the Snakemake workflow and the package.

- `rule_inputs`: what each rule's outputs depend on (its slice of the config, the digest of the
  code it runs), passed as `params:`. Light: the Snakefile imports it while it parses.
- `rule_records`: each job's record of those params beside its output, so that a rerun needs no
  Snakemake metadata; `run_rule`, the one entry of every script.
- `logs`: a script's logging, to the rule's log file and to stderr.

May import: config, variants, errors, storage.files and server.versions (the servers of the
config).
"""
