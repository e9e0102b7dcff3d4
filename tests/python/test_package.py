"""The Python package (python/shardwise, docs/python.md) against the binary it wraps: the same
options give the same document as `shardwise COMMAND --json`, bad input raises one line naming
the keyword, and help names the keywords. Run by CTest with the build tree on PYTHONPATH and
SHARDWISE_BINARY set to build/shardwise."""

import json
import os
import re
import subprocess

import pytest

import shardwise

BINARY = os.environ["SHARDWISE_BINARY"]

# Fields that time the command itself, so two runs differ.
TIMING_FIELDS = {"elapsed_s"}


def keyword_notes(notes):
    return [re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), note)
            for note in notes]


def binary_json(*args: str):
    out = subprocess.run([BINARY, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def without_timing(value):
    """The document without the fields that time the command, its notes naming keywords where
    the binary's name flags (the package's only rewording)."""
    if isinstance(value, dict):
        return {k: (keyword_notes(v) if k == "notes" else without_timing(v))
                for k, v in value.items() if k not in TIMING_FIELDS}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def test_plan_is_the_binarys_answer():
    doc = shardwise.plan(model="llama-3.1-8b", cluster="dgx-h100", nodes=1, objective="latency",
                         isl=2048, osl=128, max_tpot_ms=20.0)
    expected = binary_json("plan", "--model", "llama-3.1-8b", "--cluster", "dgx-h100",
                           "--nodes", "1", "--objective", "latency", "--isl", "2048",
                           "--osl", "128", "--max-tpot-ms", "20")
    assert without_timing(doc) == without_timing(expected)
    assert doc["layouts"], "the plan ranked no layout"


def test_simulate_is_the_binarys_answer():
    options = dict(model="llama-3.1-8b", cluster="dgx-h100", layout="tp2", concurrency=8,
                   requests=200, isl=512, osl=64, engine="vllm-0.12")
    doc = shardwise.simulate(**options)
    args = ["simulate"]
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    assert without_timing(doc) == without_timing(binary_json(*args))


def test_documents_read_as_attributes():
    doc = shardwise.size(model="llama-3.1-8b")
    assert doc.schema_version == 4  # docs/json.md: "Every object result has schema_version 4"
    with pytest.raises(AttributeError, match="no field 'no_such_field'"):
        doc.no_such_field


def test_a_list_is_the_flags_comma_separated_value():
    # recommend takes several clusters as one comma-separated --cluster.
    slo = dict(max_ttft_ms=1000, max_tpot_ms=50, rate=2, requests=200)
    joined = shardwise.recommend(model="llama-3.1-8b", cluster="dgx-h100,dgx-a100", **slo)
    listed = shardwise.recommend(model="llama-3.1-8b", cluster=["dgx-h100", "dgx-a100"], **slo)
    assert len(joined["clusters_considered"]) == 2
    assert without_timing(joined) == without_timing(listed)


def test_a_flag_is_true_and_omitted_when_false(tmp_path):
    html = tmp_path / "explain.html"
    html.write_text("a page shardwise did not write")
    with pytest.raises(shardwise.ShardwiseError, match="force"):
        shardwise.explain(model="llama-3.1-8b", html=str(html), force=False)
    shardwise.explain(model="llama-3.1-8b", html=str(html), force=True)
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_positional_arguments_follow_the_options(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(binary_json("explain", "--model", "llama-3.1-8b")))
    b.write_text(json.dumps(binary_json("explain", "--model", "llama-3.1-8b", "--layout", "tp2")))
    assert shardwise.compare(str(a), str(b)) == binary_json("compare", str(a), str(b))
    page = tmp_path / "a.html"
    assert shardwise.report(str(a), html=str(page)) is None
    assert page.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("call, keyword", [
    (lambda: shardwise.plan(isl=-1), "isl"),
    (lambda: shardwise.simulate(rate=float("nan")), "rate"),
    (lambda: shardwise.plan(rate=float("inf")), "rate"),
    (lambda: shardwise.simulate(rate=1e-300), "rate"),
    (lambda: shardwise.plan(nodes=object()), "nodes"),
    (lambda: shardwise.plan(model="no-such-model"), "model"),
])
def test_bad_input_raises_one_line_naming_the_keyword(call, keyword):
    with pytest.raises(shardwise.ShardwiseError) as error:
        call()
    message = str(error.value)
    assert keyword in message
    assert "\n" not in message
    assert "--" not in message, f"a flag where a keyword belongs: {message}"


def test_values_are_refused_before_they_can_mislead(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # An option that takes a value given True must not take the next argument as its value.
    with pytest.raises(shardwise.ShardwiseError, match="html"):
        shardwise.explain(model="llama-3.1-8b", html=True)
    assert list(tmp_path.iterdir()) == [], "a file was written"
    for call in (lambda: shardwise.explain(model=""),
                 lambda: shardwise.recommend(cluster=["dgx-h100,dgx-a100", "dgx-b200"]),
                 lambda: shardwise.run(backend="mpi")):
        with pytest.raises(shardwise.ShardwiseError):
            call()


def test_numbers_of_any_kind_read_as_the_same_value():
    numpy = pytest.importorskip("numpy")
    base = without_timing(shardwise.explain(model="llama-3.1-8b", batch=8, context=1024))
    assert without_timing(shardwise.explain(model="llama-3.1-8b", batch=numpy.int64(8),
                                            context=1024.0)) == base


def test_notes_name_keywords():
    doc = shardwise.simulate(model="llama-3.1-8b", layout="tp1", requests=100)
    assert doc.notes, "tp1 on 8 GPUs notes the unused GPUs"
    assert all("--" not in note for note in doc.notes), doc.notes


def test_an_unknown_keyword_suggests_the_nearest():
    with pytest.raises(shardwise.ShardwiseError, match="did you mean 'max_ttft_ms'"):
        shardwise.plan(max_ttft=500)


def test_help_lists_the_keywords():
    assert "max_ttft_ms" in shardwise.plan.__doc__
    assert "--max-ttft-ms" not in shardwise.plan.__doc__
    assert not re.search(r"^\s+(json|h,help|help)\b", shardwise.plan.__doc__, re.M)
    assert shardwise.plan.__name__ == "plan"
    with pytest.raises(shardwise.ShardwiseError, match=r"help\(shardwise\.plan\)"):
        shardwise.plan(help=True)
