"""The config room: the suite's options as plain data, read once, with no I/O to the target.

- options.py: every option (command line, environment variable, ini key) and its default;
- settings.py: the options read into SuiteSettings and checked (one line per bad value);
- argv.py: any plugin's option whose value is written with a space, attached for the workers;
- shards.py: `--shard I/N`, the tests' share by the durations that ship with the suite
  (durations.json);
- run_folder.py: the one way the processes of a run share data: its folder, counts read and
  changed under a lock while it runs, each process's measurements gathered at its end.

May import: nothing of the suite.
"""
