"""Conda environments: every rule names one, every env file is valid, pins match pyproject.toml.

The rule files are read as text (a rule header at column 0, directives indented by four
spaces); the list of rule names is cross-checked against ``snakemake --list-rules`` so that a
rule the text parser misses makes the test fail instead of passing silently.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from helpers.workflow import REPO, RULE_HEADER, rule_texts, snakemake
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

#: Directives that make a rule run code (and so need a software environment).
RUNS_CODE = ("script", "shell", "wrapper", "notebook", "run", "cwl")
CONDA_DIRECTIVE = re.compile(r"^    conda:[ \t]*(?:\n[ \t]+)?(?P<value>.+)$", re.MULTILINE)
EXACT_CONDA_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)=(?P<version>[0-9][^=<>!\s]*)$")


def _rule_envs() -> dict[str, tuple[Path, str | None, set[str]]]:
    """rule name -> (file that sets its env, the ``conda:`` value or None, its directives)."""
    envs = {}
    for name, chain in rule_texts().items():
        directives = set().union(*(_directives(body) for _, body in chain))
        found = [(path, m["value"]) for path, body in chain if (m := CONDA_DIRECTIVE.search(body))]
        path, value = found[0] if found else (chain[0][0], None)
        envs[name] = (path, value.strip().rstrip(",") if value else None, directives)
    return envs


def _directives(body: str) -> set[str]:
    return set(re.findall(r"^    (\w+)\s*:", body, re.MULTILINE))


def _pyproject_pins() -> dict[str, str]:
    """Normalised package name -> exact version, from dependencies and all extras."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    pins: dict[str, str] = {}
    for line in requirements:
        requirement = Requirement(line)
        exact = [s.version for s in requirement.specifier if s.operator == "=="]
        if exact:
            pins[canonicalize_name(requirement.name)] = exact[0]
    return pins


def _env_files() -> list[Path]:
    return sorted((REPO / "envs").glob("*.yaml"))


def _load_env(path: Path) -> dict:
    try:
        env = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        pytest.fail(f"{path.name} is not valid YAML: {error}")
    assert isinstance(env, dict), f"{path.name} is not a YAML mapping"
    return env


def _env_pins(env: dict) -> tuple[dict[str, str], dict[str, str]]:
    """(conda pins, pip pins) of an env file: normalised name -> version."""
    conda, pip = {}, {}
    for dependency in env.get("dependencies", []):
        if isinstance(dependency, dict):
            for line in dependency.get("pip", []):
                requirement = Requirement(line)
                exact = [s.version for s in requirement.specifier if s.operator == "=="]
                assert len(exact) == 1 and len(requirement.specifier) == 1, (
                    f"pip dependency {line!r} is not pinned exactly (name==version)"
                )
                pip[canonicalize_name(requirement.name)] = exact[0]
        else:
            match = EXACT_CONDA_PIN.match(str(dependency))
            assert match, f"conda dependency {dependency!r} is not pinned (name=version)"
            conda[canonicalize_name(match["name"])] = match["version"]
    return conda, pip


def test_rule_files_are_parsed_completely():
    """The text parser finds exactly the rules snakemake lists (minus the Snakefile's targets)."""
    result = snakemake("--list-rules", "--configfile", str(REPO / "config" / "test.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    listed = {line.split()[0] for line in result.stdout.splitlines() if line.strip()}
    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    snakefile_rules = {m["name"] or m["alias"] for m in RULE_HEADER.finditer(snakefile)}
    parsed = set(_rule_envs())
    assert parsed, "no rules found in rules/*.smk"
    assert parsed == listed - snakefile_rules, (parsed, listed)


def test_every_rule_that_runs_code_has_an_existing_conda_env():
    problems = []
    for name, (path, value, directives) in _rule_envs().items():
        if not directives & set(RUNS_CODE):
            continue  # a pure target rule (only input:) runs nothing
        if value is None:
            problems.append(f"{path.name}: rule {name} has no conda: directive")
            continue
        if not re.fullmatch(r"""(["'])[^"']+\1""", value):
            problems.append(f"{path.name}: rule {name}: conda: {value} is not a plain path")
            continue
        env = (path.parent / value[1:-1]).resolve()
        if env.parent != REPO / "envs" or env.suffix != ".yaml":
            problems.append(f"{path.name}: rule {name}: conda: {value} is not an envs/*.yaml")
        elif not env.is_file():
            problems.append(f"{path.name}: rule {name}: conda: {value} does not exist")
    assert not problems, "\n".join(problems)


def test_every_env_file_is_used_by_a_rule():
    used = {
        (path.parent / value.strip("\"'")).resolve()
        for path, value, _ in _rule_envs().values()
        if value is not None
    }
    unused = [p.name for p in _env_files() if p.resolve() not in used]
    assert not unused, f"env files no rule uses: {unused}"


@pytest.mark.parametrize("env_file", _env_files(), ids=lambda p: p.name)
def test_env_file_is_pinned_yaml_on_conda_forge(env_file):
    env = _load_env(env_file)
    assert set(env) <= {"name", "channels", "dependencies"}, sorted(env)
    assert env.get("channels") == ["conda-forge", "nodefaults"], env.get("channels")
    conda, pip = _env_pins(env)
    assert "python" in conda, f"{env_file.name} does not pin python"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requires = SpecifierSet(project["requires-python"])
    assert f"{conda['python']}.0" in requires or conda["python"] in requires, (
        f"{env_file.name}: python={conda['python']} does not satisfy requires-python {requires}"
    )
    assert pip or len(conda) > 1, f"{env_file.name} has no packages besides python"


@pytest.mark.parametrize("env_file", _env_files(), ids=lambda p: p.name)
def test_env_pins_agree_with_pyproject(env_file):
    env = _load_env(env_file)
    conda, pip = _env_pins(env)
    pins = _pyproject_pins()
    problems = []
    for name, version in pip.items():
        if name not in pins:
            problems.append(f"{name}=={version} is not pinned in pyproject.toml")
        elif pins[name] != version:
            problems.append(f"{name}=={version}, but pyproject.toml pins {name}=={pins[name]}")
    for name, version in conda.items():  # conda packages that are also Python dependencies
        if name in pins and pins[name] != version:
            problems.append(f"{name}={version} (conda), but pyproject.toml pins {pins[name]}")
    assert not problems, f"{env_file.name}:\n" + "\n".join(problems)


SCRIPT_DIRECTIVE = re.compile(
    r'^    script:\s*\n\s+"\.\./workflow_scripts/(?P<name>[^"]+)\.py"', re.M
)
SCRIPT_PARAM = re.compile(r'^        script="(?P<name>\w+)",', re.M)


def _rule_scripts() -> dict[str, str]:
    """rule name -> the workflow script it runs (``{params.script}`` resolved)."""
    scripts = {}
    for name, chain in rule_texts().items():
        found = [m["name"] for _, body in chain if (m := SCRIPT_DIRECTIVE.search(body))]
        if not found:
            continue
        script = found[0]
        if script == "{params.script}":
            script = next(m["name"] for _, body in chain if (m := SCRIPT_PARAM.search(body)))
        scripts[name] = script
    return scripts


def test_every_rule_runs_the_script_named_after_it():
    """A workflow script is named after its rule; rules made with `use rule` run their
    parent's script (imagenet_c_score and reva_score run score.py), except the figures made
    from figure_base, which name their own."""
    parents = {m["alias"]: m["parent"] for path in (REPO / "rules").glob("*.smk")
               for m in RULE_HEADER.finditer(path.read_text(encoding="utf-8")) if m["alias"]}
    assert {"imagenet_c_score", "reva_score", "reva_imagenet_c_score"} <= set(parents)

    def root(rule: str) -> str:
        while rule in parents:
            rule = parents[rule]
        return rule

    scripts = _rule_scripts()
    for rule, script in scripts.items():
        # a figure (made from figure_base) names its own script in params.script
        expected = rule if root(rule) == "figure_base" else root(rule)
        assert script == expected, (rule, script)
    on_disk = {p.stem for p in (REPO / "workflow_scripts").glob("*.py")}
    assert on_disk == set(scripts.values()), on_disk ^ set(scripts.values())


def test_statistics_jobs_do_not_load_torch():
    """The rules in envs/stats.yaml (which has no torch) import only what loads without it."""
    envs, scripts = _rule_envs(), _rule_scripts()
    stats = sorted({scripts[r] for r, (_, value, _) in envs.items()
                    if value and value.endswith('/stats.yaml"') and r in scripts} - {"figure_base"})
    assert {"rates", "curves", "summary", "figure_curves", "overlap_report"} <= set(stats), stats
    imports = {}
    for script in stats:
        text = (REPO / "workflow_scripts" / f"{script}.py").read_text(encoding="utf-8")
        imports[script] = re.findall(r"^from (vcrbench[\w.]*) import", text, re.M)

    def torch_loaded_by(modules: list[str]) -> str:
        code = ("import sys; import " + ", ".join(modules)
                + "; print(','.join(m for m in ('torch', 'torchvision') if m in sys.modules))")
        result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                                text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    # One interpreter imports what all of them import: if that loads no torch, none does; only
    # otherwise is each script's set tried alone, to name the culprits.
    every = sorted({m for modules in imports.values() for m in modules})
    if not torch_loaded_by(every):
        return
    loaded = {script: torch_loaded_by(modules) for script, modules in imports.items()}
    loaded = {script: found for script, found in loaded.items() if found}
    assert not loaded, f"statistics scripts that load torch: {loaded}"
