"""The Kubernetes manifests `--emit dynamo-k8s` and `--emit llm-d` write, parsed as YAML
(python3-yaml) and checked against the plan that chose the deployment: the fields each
documentation requires are there, the pods' GPUs add up to the deployment's GPUs (replicas x
nodes x GPUs per pod, counted here from the launch's own layout names), the model is the Hugging
Face id with the launch's context length, and DeepEP's vLLM backend is set exactly when a pool's
prediction used DeepEP. Run by CTest with SHARDWISE_BINARY set to build/shardwise."""

import json
import os
import re
import subprocess

import yaml

BINARY = os.environ["SHARDWISE_BINARY"]
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
R1_ON_H200 = ["--model", "deepseek-r1", "--cluster", "dgx-h200", "--nodes", "2",
              "--isl", "2048", "--osl", "1024"]


def plan(*args):
    out = subprocess.run([BINARY, "plan", *args, "--json"], check=True, capture_output=True,
                         text=True)
    document = json.loads(out.stdout)
    launch = document["launch"]
    assert len(launch["files"]) == 1
    return launch, yaml.safe_load(launch["files"][0]["text"])


def layout_gpus(name):
    """GPUs of a layout name such as dp8pp2ep8 (ep shares the other dimensions' GPUs)."""
    gpus = 1
    for dim, size in re.findall(r"(dp|tp|pp|cp|ep)(\d+)", name):
        if dim != "ep":
            gpus *= int(size)
    return gpus


def deployment_gpus(launch):
    return sum(pool["workers"] * layout_gpus(pool["layout"]) for pool in launch["pools"])


def uses_deepep(launch):
    return any(pool[phase] != "engine-default" for pool in launch["pools"]
               for phase in ("prefill_ep", "decode_ep"))


def dynamo_workers(manifest):
    assert manifest["apiVersion"] == "nvidia.com/v1alpha1"
    assert manifest["kind"] == "DynamoGraphDeployment"
    name = manifest["metadata"]["name"]
    assert DNS_1123.match(name) and len(name) <= 63, name
    services = manifest["spec"]["services"]
    assert services["Frontend"]["componentType"] == "frontend"
    workers = {k: v for k, v in services.items() if v["componentType"] == "worker"}
    for service in services.values():
        assert service["dynamoNamespace"] == name
        assert service["extraPodSpec"]["mainContainer"]["image"]
    return workers


def dynamo_gpus(workers):
    return sum(w["replicas"] * w.get("multinode", {}).get("nodeCount", 1) *
               int(w["resources"]["limits"]["gpu"]) for w in workers.values())


def command_line(container):
    assert container["command"] == ["/bin/sh", "-c"]
    assert len(container["args"]) == 1
    return container["args"][0]


def env_names(container):
    return {e["name"] for e in container.get("env", [])}


def check_model_and_context(line, launch):
    assert f" {launch['model']} " in line or f"--model {launch['model']} " in line, line
    assert f"--max-model-len {launch['max_model_len']} " in line, line


def test_dynamo_deepseek_r1_on_two_h200_nodes():
    launch, manifest = plan(*R1_ON_H200, "--emit", "dynamo-k8s")
    assert launch["model"] == "deepseek-ai/DeepSeek-R1"
    workers = dynamo_workers(manifest)
    assert dynamo_gpus(workers) == deployment_gpus(launch)
    for worker in workers.values():
        assert int(worker["resources"]["limits"]["gpu"]) <= 8  # a DGX H200 is one host of 8
        container = worker["extraPodSpec"]["mainContainer"]
        check_model_and_context(command_line(container), launch)
        assert ("VLLM_ALL2ALL_BACKEND" in env_names(container)) == uses_deepep(launch)


def test_llmd_deepseek_r1_on_two_h200_nodes():
    launch, values = plan(*R1_ON_H200, "--emit", "llm-d")
    assert values["modelArtifacts"]["uri"] == "hf://deepseek-ai/DeepSeek-R1"
    assert values["prefill"]["create"] is False
    decode = values["decode"]
    assert decode["create"] is True
    container = decode["containers"][0]
    limits, requests = container["resources"]["limits"], container["resources"]["requests"]
    assert limits == requests
    pods = decode["parallelism"]["workers"]
    assert decode["replicas"] * pods * int(limits["nvidia.com/gpu"]) == deployment_gpus(launch)
    assert values["multinode"] == (pods > 1)
    check_model_and_context(command_line(container), launch)
    assert ("VLLM_ALL2ALL_BACKEND" in env_names(container)) == uses_deepep(launch)


def test_disaggregated_pools_for_both_targets():
    launch, manifest = plan("--emit-deployment", "disaggregated", "--emit", "dynamo-k8s")
    roles = {pool["role"]: pool for pool in launch["pools"]}
    assert set(roles) == {"prefill", "decode"}
    workers = dynamo_workers(manifest)
    assert workers["VllmPrefillWorker"]["replicas"] == roles["prefill"]["workers"]
    assert workers["VllmDecodeWorker"]["replicas"] == roles["decode"]["workers"]
    assert dynamo_gpus(workers) == deployment_gpus(launch)
    prefill_line = command_line(workers["VllmPrefillWorker"]["extraPodSpec"]["mainContainer"])
    decode_line = command_line(workers["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"])
    assert "--is-prefill-worker" in prefill_line and "--is-prefill-worker" not in decode_line

    launch, values = plan("--emit-deployment", "disaggregated", "--emit", "llm-d")
    roles = {pool["role"]: pool for pool in launch["pools"]}
    assert values["routing"]["proxy"]["enabled"] is True
    total = 0
    for role in ("prefill", "decode"):
        section = values[role]
        assert section["create"] is True
        assert section["replicas"] == roles[role]["workers"]
        container = section["containers"][0]
        assert "NixlConnector" in command_line(container)
        total += (section["replicas"] * section["parallelism"]["workers"] *
                  int(container["resources"]["limits"]["nvidia.com/gpu"]))
    assert total == deployment_gpus(launch)
    # The decode pods' vLLM listens where the routing sidecar forwards.
    decode_port = values["decode"]["containers"][0]["ports"][0]["containerPort"]
    assert decode_port == values["routing"]["proxy"]["targetPort"]


def test_qwen3_on_gb200_trays_spans_hosts_of_four():
    launch, manifest = plan("--model", "qwen3-235b-a22b", "--cluster", "gb200-nvl72",
                            "--gpus", "8", "--emit-deployment", "aggregated",
                            "--emit", "dynamo-k8s")
    workers = dynamo_workers(manifest)
    assert dynamo_gpus(workers) == deployment_gpus(launch) == 8
    for worker in workers.values():
        # A GB200 compute tray is a host of 4 GPUs (data/clusters/SOURCES.md).
        assert int(worker["resources"]["limits"]["gpu"]) <= 4


def test_unknown_target_is_one_line():
    out = subprocess.run([BINARY, "plan", "--emit", "helm"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "llm-d" in out.stderr, out.stderr
