"""Checks .github/workflows/release.yml, which cannot run here.

It must parse as YAML; every job needs `runs-on` and steps that each either
`uses` an action or `run`s a script that bash can parse; `${{ }}`
expressions must be closed; it must trigger on vX.Y.Z tags; and its build
matrix must cover exactly the targets the plugin downloads for (the ones
lua/pi-ide/install/release.lua can name), publishing pi-ide-<target> and
its .sha256.
"""

import pathlib
import re
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github/workflows/release.yml"
RELEASE_LUA = ROOT / "lua/pi-ide/install/release.lua"

problems = []


def problem(message):
    problems.append(message)


def lua_targets():
    """Every target release.target() can return."""
    text = RELEASE_LUA.read_text()
    arches = set(re.findall(r'= "(x86_64|aarch64)"', text))
    targets = {f"{arch}-apple-darwin" for arch in arches}
    targets |= {f"{arch}-unknown-linux-{libc}" for arch in arches for libc in ("gnu", "musl")}
    return targets


def check_script(where, script):
    # Expressions are filled in before bash sees the script.
    if script.count("${{") != script.count("}}"):
        problem(f"{where}: an unclosed ${{{{ }}}} expression")
    plain = re.sub(r"\$\{\{.*?\}\}", "EXPR", script)
    result = subprocess.run(["bash", "-n"], input=plain, text=True, capture_output=True)
    if result.returncode != 0:
        problem(f"{where}: bash cannot parse the script: {result.stderr.strip()}")


def main():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    if not isinstance(workflow, dict):
        problem("not a YAML mapping")
        return
    # YAML 1.1 reads the key `on` as True.
    trigger = workflow.get("on", workflow.get(True))
    tags = (trigger or {}).get("push", {}).get("tags", [])
    if tags != ["v[0-9]+.[0-9]+.[0-9]+"]:
        problem(f"must run on vX.Y.Z tags, runs on {tags!r}")
    jobs = workflow.get("jobs") or {}
    if not jobs:
        problem("no jobs")
    for name, job in jobs.items():
        if "runs-on" not in job:
            problem(f"job {name}: no runs-on")
        for needed in [job.get("needs")] if isinstance(job.get("needs"), str) else job.get("needs", []):
            if needed not in jobs:
                problem(f"job {name}: needs unknown job {needed}")
        steps = job.get("steps") or []
        if not steps:
            problem(f"job {name}: no steps")
        for index, step in enumerate(steps):
            where = f"job {name}, step {step.get('name', index + 1)}"
            if ("uses" in step) == ("run" in step):
                problem(f"{where}: needs exactly one of uses and run")
            if "run" in step:
                check_script(where, step["run"])
            for key, value in step.items():
                if isinstance(value, str) and key != "run" and value.count("${{") != value.count("}}"):
                    problem(f"{where}: an unclosed expression in {key}")
    matrix = jobs.get("build", {}).get("strategy", {}).get("matrix", {}).get("include", [])
    built = {entry.get("target") for entry in matrix}
    wanted = lua_targets()
    if built != wanted:
        problem(f"the build matrix makes {sorted(built)}, the plugin downloads {sorted(wanted)}")
    text = WORKFLOW.read_text()
    for asset in ('"dist/pi-ide-$TARGET"', '"pi-ide-$TARGET.sha256"'):
        if asset not in text:
            problem(f"the build job does not write {asset}")


main()
if problems:
    for message in problems:
        print(f"release.yml: {message}", file=sys.stderr)
    sys.exit(1)
print(f"release.yml: parses; {len(lua_targets())} targets match the plugin's")
