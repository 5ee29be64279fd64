"""`assistant-reference`: the reference server, or one of the proof's mutants or variants of it.

    assistant-reference --port 8000 --token T [--mutant NAME | --variant NAME]

The reference's own command line (reference/cli.py) with two options more; `start` runs it in a
subprocess, as reference.embedded.start runs the plain reference.
"""

from __future__ import annotations

from functools import partial

from starlette.types import ASGIApp

from assistant_conformance.proof import mutants, variants
from assistant_conformance.reference import cli, embedded
from assistant_conformance.report import closed_pipe

start_server = partial(embedded.start, module=__name__)


def main(argv: list[str] | None = None) -> None:
    parser = cli.parser()
    wrapper = parser.add_mutually_exclusive_group()
    wrapper.add_argument("--mutant", help="serve a deliberately wrong variant (proof/mutants)")
    wrapper.add_argument("--variant", help="serve a conformant variant (proof/variants.py)")
    args = parser.parse_args(argv)
    for kind, name, known in (
        ("mutant", args.mutant, mutants.MUTANTS),
        ("variant", args.variant, variants.VARIANTS),
    ):
        if name and name not in known:
            parser.error(f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}")

    def wrap(app: ASGIApp) -> ASGIApp:
        if args.mutant:
            return mutants.with_mutant(app, args.mutant)
        return variants.with_variant(app, args.variant) if args.variant else app

    cli.serve(args, wrap)


if __name__ == "__main__":
    closed_pipe.exit_quietly(main)
