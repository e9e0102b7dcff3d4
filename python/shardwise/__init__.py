"""shardwise: split a large language model across GPUs, predict memory, time and money.

Every command of the ``shardwise`` binary is a function here that takes the command's options as
keyword arguments (``--max-ttft-ms 500`` is ``max_ttft_ms=500``, a flag such as ``--force`` is
``force=True``, a comma-separated list may be a Python list) and returns the document the
command prints with ``--json``, as a dict whose keys also read as attributes::

    import shardwise
    plan = shardwise.plan(model="llama-3.1-70b", cluster="dgx-h100", nodes=2, objective="latency")
    print(plan.layouts[0]["layout"], plan.verdict["why"])

The options are parsed, checked and answered by the same code as the binary's (the extension
module runs the command line in process), so the numbers are the binary's. Bad input raises
ShardwiseError with the one line the binary prints, keywords in place of flags.
``help(shardwise.plan)`` shows every keyword. See docs/python.md.
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Iterable
from typing import Any

from . import _shardwise

__version__ = _shardwise.__version__

__all__ = [
    "ShardwiseError",
    "ShardwiseInternalError",
    "Document",
    "models",
    "gpus",
    "size",
    "clusters",
    "collectives",
    "explain",
    "plan",
    "roofline",
    "simulate",
    "price",
    "recommend",
    "calibrate",
    "run",
    "train",
    "report",
    "compare",
]


class ShardwiseError(ValueError):
    """Bad input: the message is one line naming the keyword that is wrong and how to fix it."""


class ShardwiseInternalError(RuntimeError):
    """A bug in shardwise (the binary's exit code 3): please report the message."""


class Document(dict):
    """A command's --json document: a dict whose keys also read as attributes (plan.ranked)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no field '{name}' (fields: {', '.join(self)})") from None


def _document(value: Any) -> Any:
    if isinstance(value, dict):
        return Document((key, _document(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_document(item) for item in value]
    return value


def _keyword(flag: str) -> str:
    return flag.replace("-", "_")


def _python_message(command: str, message: str) -> str:
    """The binary's one-line message with keywords where it names flags."""
    message = re.sub(r"\(see 'shardwise(?: (\w+))? --help'\)",
                     lambda m: f"(see help(shardwise.{m.group(1) or command}))", message)
    return re.sub(r"--([a-z][a-z0-9-]*)", lambda m: _keyword(m.group(1)), message)


def _text(keyword: str, value: Any) -> str:
    if isinstance(value, bool):
        raise ShardwiseError(f"{keyword}: True and False are for flags, not values or lists")
    if isinstance(value, numbers.Integral):  # int, numpy.int64, ...
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if number.is_integer() and abs(number) < 2**53:
            return str(int(number))  # 2.0 reads as 2, which whole-number options take
        return repr(number)  # the shortest text that reads back as the same double
    if isinstance(value, str):
        if not value:
            raise ShardwiseError(f"{keyword}: an empty value; leave the keyword out for its default")
        return value
    raise ShardwiseError(
        f"{keyword}: expected a number, a string, True/False or a list of them, got "
        f"{type(value).__name__}")


def _list(keyword: str, values: Iterable) -> str:
    items = [_text(keyword, item) for item in values]
    if not items or any("," in item for item in items):
        raise ShardwiseError(f"{keyword}: a list needs at least one item and no item with a comma")
    return ",".join(items)


def _command_line(command: str, positional: tuple, options: dict, answers_json: bool) -> list[str]:
    # --json first: an option left without its value (html=True) must not take it as one.
    args = [command, "--json"] if answers_json else [command]
    if command == "run" and options.get("backend") in ("mpi", "nccl"):
        raise ShardwiseError(
            f"backend: '{options['backend']}' runs one process per rank; launch the binary "
            "under mpirun (docs/commands/run.md), or use backend='threads' or 'cuda' here")
    for keyword, value in options.items():
        if keyword == "json":
            continue  # always: the answer is the --json document
        if keyword == "help":
            raise ShardwiseError(f"help: the command's help is help(shardwise.{command})")
        flag = "--" + keyword.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, Iterable) and not isinstance(value, str):
            args.append(f"{flag}={_list(keyword, value)}")
        else:
            args.append(f"{flag}={_text(keyword, value)}")
    if positional:  # after "--", so a file name starting with '-' is not read as an option
        args += ["--"] + [_text("positional argument", p) for p in positional]
    return args


def _run(command: str, positional: tuple, options: dict, answers_json: bool) -> Any:
    code, out, error, internal = _shardwise.run_command_line(
        _command_line(command, positional, options, answers_json))
    if code != 0:
        message = _python_message(command, error)
        if internal:
            raise ShardwiseInternalError(message)
        raise ShardwiseError(message)
    if not answers_json:
        return None
    try:
        document = json.loads(out)
    except json.JSONDecodeError as error:
        raise ShardwiseInternalError(
            f"shardwise {command} printed no JSON document: {error}") from None
    if isinstance(document, dict) and isinstance(document.get("notes"), list):
        document["notes"] = [_python_message(command, note) if isinstance(note, str) else note
                             for note in document["notes"]]
    return _document(document)


def _help(command: str, answers_json: bool) -> str:
    code, out, _, _ = _shardwise.run_command_line([command, "--help"])
    if code != 0:
        return ""
    # Not keywords here: --help, and --json (always given).
    out = "\n".join(line for line in out.splitlines()
                    if not re.match(r"\s+(-h,)?--(help|json)\b", line))
    options = re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", lambda m: _keyword(m.group(1)), out)
    answer = "its --json document" if answers_json else "None (it writes a file)"
    return (f"shardwise.{command}(**options): the `shardwise {command}` command; returns "
            f"{answer}.\nKeyword arguments are the options below ('-' as '_'; a flag "
            f"is True).\n\n{options}")


def _make(command: str, answers_json: bool = True):
    def call(*positional: Any, **options: Any) -> Any:
        return _run(command, positional, options, answers_json)

    call.__name__ = call.__qualname__ = command
    call.__doc__ = _help(command, answers_json)
    return call


models = _make("models")
gpus = _make("gpus")
size = _make("size")
clusters = _make("clusters")
collectives = _make("collectives")
explain = _make("explain")
plan = _make("plan")
roofline = _make("roofline")
simulate = _make("simulate")
price = _make("price")
recommend = _make("recommend")
calibrate = _make("calibrate")  # results=[files]: writes the fitted profile to output=
run = _make("run")
train = _make("train")
report = _make("report", answers_json=False)  # draws a saved result as an HTML page
compare = _make("compare")
