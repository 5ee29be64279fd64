"""The repository's root. The suite's pytest plugin is registered by the installed package (its
`pytest11` entry point), not here: a run from a checkout and a run from a wheel load it the same
way, before the command line is read (so a suite option's value is never taken for a test path).
"""
