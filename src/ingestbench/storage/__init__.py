"""What the workflow keeps on disk.

- `files`: result files written atomically (complete under their final name or not there), and
  JSON result files read with one sentence naming the file and the fix.
- `disk`: what a run will write, held against the free space before anything is written.

May import: errors.
"""
