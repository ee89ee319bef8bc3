"""The README and docs/ say what lbo does: every link leads somewhere, every example command is
one lbo takes, and the README's first job runs as shown.

    LBO_BIN=build/lbo python3 tests/integration/docs_check.py

1. Each relative link of README.md, docs/*.md and bench/README.md names a file or folder of the
   repository, and its #anchor, if any, a heading of the page it leads to (GitHub's slugs).
2. Each line of a fenced block that runs lbo (`build/lbo ...`, `lbo ...`, `mpirun ... lbo ...`)
   names a subcommand whose --help lists every option the line gives; a job file it names that
   the repository has is validated (`lbo validate`, exit 0).
3. The README's "A first job": its my_job.toml and objective.py blocks, written to a folder
   with the two datasets the job names, validate and run to the end: exit 0, 40 trials ok.

Standard library only; every problem is printed, then the exit status is 1.
"""

import csv
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LBO = os.path.abspath(os.environ.get("LBO_BIN", os.path.join(REPO, "build", "lbo")))
PAGES = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
# Pages whose links are checked too (their fenced blocks are program output, not commands).
LINKED = [os.path.join(REPO, "bench", "README.md")]
problems = []


def where(page, line):
    return f"{os.path.relpath(page, REPO)}:{line}"


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page):
    found, fence = set(), False
    with open(page, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and re.match(r"#{1,6} ", line):
                found.add(slug(line.lstrip("#")))
    return found


def fenced_lines(page):
    """(line number, fence language, text) of every line inside a fenced block."""
    language = None
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                language = line[3:].strip() if language is None else None
            elif language is not None:
                yield number, language, line.rstrip("\n")


def check_links(page):
    fence = False
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue  # http(s), mailto: not followed here
                path, _, anchor = target.partition("#")
                goal = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(goal):
                    problems.append(f"{where(page, number)}: link {target}: no {os.path.relpath(goal, REPO)}")
                elif anchor and goal.endswith(".md") and anchor not in anchors(goal):
                    problems.append(f"{where(page, number)}: link {target}: no heading #{anchor} in "
                                    f"{os.path.relpath(goal, REPO)}")


HELP = {}


def subcommands():
    """The subcommands `lbo --help` lists."""
    if None not in HELP:
        listing = subprocess.run([LBO, "--help"], capture_output=True, text=True).stdout
        HELP[None] = set(re.findall(r"^  ([a-z][a-z-]*) ", listing.partition("Subcommands:")[2], re.M))
    return HELP[None]


def help_of(subcommand):
    """`lbo SUBCOMMAND --help`, or None when lbo has no such subcommand."""
    if subcommand not in subcommands():
        return None
    if subcommand not in HELP:
        HELP[subcommand] = subprocess.run([LBO, subcommand, "--help"], capture_output=True, text=True).stdout
    return HELP[subcommand]


def check_command(page, number, text):
    words = shlex.split(text.split(" #")[0].replace("[", " ").replace("]", " "))
    at = next((i for i, w in enumerate(words) if w in ("lbo", "build/lbo") or w.endswith("/lbo")), None)
    if at is None or at + 1 >= len(words):
        return
    subcommand, rest = words[at + 1], words[at + 2:]
    usage = help_of(subcommand)
    if usage is None:
        problems.append(f"{where(page, number)}: `lbo {subcommand}`: no such subcommand")
        return
    for w in rest:
        option = w.split("=")[0]
        if option.startswith("--") and not re.search(re.escape(option) + r"\b", usage):
            problems.append(f"{where(page, number)}: `lbo {subcommand} {option}`: not an option of lbo {subcommand}")
        elif re.fullmatch(r"-[a-zA-Z]", option) and not re.search(option + r"[, ]", usage):
            problems.append(f"{where(page, number)}: `lbo {subcommand} {option}`: not an option of lbo {subcommand}")
        elif w.endswith(".toml") and os.path.isfile(os.path.join(REPO, w)):
            done = subprocess.run([LBO, "validate", os.path.join(REPO, w)], capture_output=True, text=True)
            if done.returncode != 0:
                problems.append(f"{where(page, number)}: lbo validate {w}: exit {done.returncode}: {done.stderr.strip()}")


def check_commands(page):
    for number, language, text in fenced_lines(page):
        if language in ("sh", "bash", "") and re.match(r"\s*((mpirun|srun)\s.*\s)?(\S*/)?lbo [a-z]", text):
            check_command(page, number, text)


def block(page, first_line):
    """The fenced block of `page` whose first line is `first_line`, without it."""
    lines, inside = [], None
    with open(page, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                if inside:
                    return "".join(lines)
                inside = False
                continue
            if inside is False:
                inside = line.rstrip("\n") == first_line
                continue
            if inside:
                lines.append(line)
    return None


def check_first_job():
    readme = PAGES[0]
    job, objective = block(readme, "# my_job.toml"), block(readme, "# objective.py")
    if job is None or objective is None:
        problems.append("README.md: no fenced block starting with `# my_job.toml` and one with `# objective.py`")
        return
    folder = tempfile.mkdtemp(prefix="lbo-docs-")
    with open(os.path.join(folder, "my_job.toml"), "w") as f:
        f.write(job)
    with open(os.path.join(folder, "objective.py"), "w") as f:
        f.write(objective)
    os.makedirs(os.path.join(folder, "data"))
    for year in ("2024", "2025"):
        open(os.path.join(folder, "data", f"{year}.csv"), "w").close()
    for args in (["validate", "my_job.toml"], ["run", "my_job.toml", "--local-slots", "2"]):
        done = subprocess.run([LBO] + args, cwd=folder, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            problems.append(f"README.md, A first job: lbo {' '.join(args)}: exit {done.returncode}:\n"
                            f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
            return
    with open(os.path.join(folder, "runs", "my-job", "results.csv")) as f:
        rows = list(csv.DictReader(f))
    ok = sum(r["status"] == "ok" for r in rows)
    if len(rows) != 40 or ok != 40:
        problems.append(f"README.md, A first job: {ok} of {len(rows)} trials ok, expected 40 of 40 (in {folder})")
        return
    subprocess.run(["rm", "-rf", folder])


def main():
    for page in PAGES:
        check_links(page)
        check_commands(page)
    for page in LINKED:
        check_links(page)
    check_first_job()
    for p in problems:
        print(p)
    print(f"docs_check: {len(PAGES) + len(LINKED)} pages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
