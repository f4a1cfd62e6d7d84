#!/usr/bin/env python3
"""What a kubelet would write, for the test environment that has none.

test/k8s runs a real API server, controller manager and Slinky operator but
no kubelet, so pods stay Pending. This marks pods of one namespace as a
kubelet does once their containers run and their probes pass: binds each to
a node name (as the scheduler would), then writes status.phase Running,
condition Ready True and a pod IP through the pods' status subresource.
It also keeps the node's status Ready and its lease renewed, as a kubelet's
heartbeat does. Only node and pod statuses (and the node's lease) are
written; everything else is the real parts'.

    kubelet-standin.py ENVDIR NAMESPACE... [--except NAME ...] [--fail NAME] [--loop]

Pods being deleted are removed for good (their containers have stopped).
--except leaves pods whose name starts with NAME Pending; --fail makes the
named pod's container wait with ErrImagePull-like reason `InvalidImageName`
(a failure that retrying cannot cure); --loop goes on doing this every half
second, as a kubelet does, until it is stopped. Prints the pods it marked.
"""

import argparse
import json
import ssl
import sys
import time
import urllib.error
import urllib.request


NODE = "kube-node-1"


def api(env, method, path, body=None, content_type="application/json"):
    ctx = ssl.create_default_context(cafile=env["DIR"] + "/pki/ca.crt")
    with open(env["DIR"] + "/pki/admin.token") as f:
        token = f.read().strip()
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(env["SERVER"] + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
            return json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        if (e.code == 409 and method == "POST") or e.code == 404:
            return None  # Already bound (or registered); gone meanwhile.
        raise SystemExit(f"kubelet-standin: {method} {path}: HTTP {e.code}: {e.read()[:300]!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("envdir")
    p.add_argument("namespaces", nargs="+")
    p.add_argument("--except", dest="skip", action="append", default=[])
    p.add_argument("--fail")
    p.add_argument("--loop", action="store_true")
    a = p.parse_args()
    env = {"DIR": a.envdir}
    with open(a.envdir + "/env") as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            env[k] = v
    # The node registers itself first, as a kubelet does, and then keeps
    # saying it is alive (node status and lease), or the controller
    # manager's node lifecycle controller marks it NotReady after 40 s and
    # every pod on it not ready.
    api(env, "POST", "/api/v1/nodes",
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    done = {}  # Pod uid -> what was written, so that a loop writes each once.
    beat = 0.0
    while True:
        if time.time() - beat > 5:
            heartbeat(env)
            beat = time.time()
        for ns in a.namespaces:
            sync(env, a, ns, done)
        if not a.loop:
            return 0
        sys.stdout.flush()
        time.sleep(0.5)


def heartbeat(env):
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "kubelet-standin", "lastHeartbeatTime": now, "lastTransitionTime": now}
    api(env, "PATCH", f"/api/v1/nodes/{NODE}/status", {"status": {"conditions": [ready]}},
        "application/merge-patch+json")
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    micro = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    spec = {"holderIdentity": NODE, "leaseDurationSeconds": 40, "renewTime": micro}
    if api(env, "PATCH", f"{leases}/{NODE}", {"spec": spec}, "application/merge-patch+json") is None:
        api(env, "POST", leases, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                  "metadata": {"name": NODE}, "spec": spec})


def sync(env, a, namespace, done):
    pods = (api(env, "GET", f"/api/v1/namespaces/{namespace}/pods") or {}).get("items", [])
    for i, pod in enumerate(sorted(pods, key=lambda p: p["metadata"]["name"])):
        name = pod["metadata"]["name"]
        if any(name.startswith(s) for s in a.skip):
            continue
        base = f"/api/v1/namespaces/{namespace}/pods/{name}"
        if "deletionTimestamp" in pod["metadata"]:
            # Its containers stopped: the kubelet removes the pod for good.
            api(env, "DELETE", base + "?gracePeriodSeconds=0")
            print(namespace + "/" + name, "deleted")
            continue
        if not pod["spec"].get("nodeName"):
            api(env, "POST", base + "/binding",
                {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                 "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}})
        uid = pod["metadata"]["uid"]
        ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in pod["status"].get("conditions", []))
        if done.get(uid) == "running" and ready:
            continue
        containers = [c["name"] for c in pod["spec"]["containers"]]
        if name == a.fail:
            statuses = [{"name": c, "ready": False, "restartCount": 0, "image": "x", "imageID": "",
                         "state": {"waiting": {"reason": "InvalidImageName",
                                               "message": "couldn't parse image name"}}}
                        for c in containers]
            status = {"phase": "Pending", "containerStatuses": statuses,
                      "conditions": [{"type": "Ready", "status": "False"}]}
        else:
            statuses = [{"name": c, "ready": True, "restartCount": 0, "image": "x", "imageID": "",
                         "started": True, "state": {"running": {"startedAt": "2026-12-01T00:00:00Z"}}}
                        for c in containers]
            ip = pod["status"].get("podIP") or f"10.244.{len(done) // 200}.{10 + len(done) % 200}"
            status = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "hostIP": "10.0.0.1",
                      "containerStatuses": statuses,
                      "conditions": [{"type": t, "status": "True"} for t in
                                     ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}
        api(env, "PATCH", base + "/status", {"status": status}, "application/merge-patch+json")
        done[uid] = "failing" if name == a.fail else "running"
        print(namespace + "/" + name, done[uid])


if __name__ == "__main__":
    sys.exit(main())
