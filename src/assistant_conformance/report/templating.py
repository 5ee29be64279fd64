"""The HTML pages' Jinja2 environment: templates and style sheets shipped as package data
(`templates/` beside a page's module, found through the package's import spec by
jinja2.PackageLoader, so an installed wheel renders as a checkout does), every value escaped, a
style sheet inlined by `stylesheet(name) | safe`.

A page loads nothing: its style is in the page, and it has no script.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

TEMPLATES = "templates"  # the folder of a package holding its pages' templates and style sheets


def _none_as_empty(value: Any) -> Any:
    return "" if value is None else value


@cache
def html_environment(package: str) -> jinja2.Environment:
    """Templates of `package` first, then the report's own (the shared macros and style sheet)."""
    loaders = [jinja2.PackageLoader(package, TEMPLATES)]
    if package != __package__:
        loaders.append(jinja2.PackageLoader(__package__, TEMPLATES))
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,  # every page is HTML, every value a target's or the user's: escaped
        undefined=jinja2.StrictUndefined,  # a misspelt name fails the render, not the page
        finalize=_none_as_empty,  # None shows as nothing, not "None"
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.globals["stylesheet"] = lambda name: _stylesheet(environment, name)
    return environment


def _stylesheet(environment: jinja2.Environment, name: str) -> str:
    """A shipped style sheet's text, inlined in a <style> element as it is (`| safe`: no escape
    applies inside one; the text is the package's own, and cannot end the element)."""
    assert environment.loader is not None
    text = environment.loader.get_source(environment, name)[0]
    if "</" in text:
        raise ValueError(f"{name} would end the <style> element it is inlined in")
    return text


def render_page(package: str, template: str, **context: Any) -> str:
    return html_environment(package).get_template(template).render(**context)
