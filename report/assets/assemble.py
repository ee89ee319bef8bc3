#!/usr/bin/python3
"""Development helper (lbo builds the real page in C++, src/html.cpp): fills the three
placeholders of report.html and writes a self-contained page.

  assemble.py DATA.json OUT.html        (DATA.json: a window.LBO_DATA document, '-' for stdin)
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def script_safe(text):
    # Inside <script>, "</" could close the element; "<\/" is the same string to JavaScript.
    return text.replace("</", "<\\/")


def json_safe(text):
    # As lbo's assets::json_safe: no "<", ">" or "&" of a JSON string can open "<!--" or
    # "<script" (which make the parser look past the data's "</script>").
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data = sys.stdin.read() if sys.argv[1] == "-" else pathlib.Path(sys.argv[1]).read_text()
    page = (HERE / "report.html").read_text()
    parts = {
        "/*@ECHARTS@*/": (HERE / "vendor/echarts/echarts.min.js").read_text(),
        "/*@DATA@*/": json_safe(data.strip()),
        "/*@REPORT_JS@*/": (HERE / "report.js").read_text(),
    }
    for key, value in parts.items():
        if page.count(key) != 1:
            sys.exit("assemble: %s must occur exactly once in report.html" % key)
        if "</script" in value.lower():
            sys.exit("assemble: %s's text contains '</script'" % key)
    # One pass, so that a placeholder's text inside an inserted part is not replaced again.
    out, rest = [], page
    while True:
        hits = [(rest.find(k), k) for k in parts if rest.find(k) >= 0]
        if not hits:
            break
        i, k = min(hits)
        out += [rest[:i], parts[k]]
        rest = rest[i + len(k):]
    out.append(rest)
    pathlib.Path(sys.argv[2]).write_text("".join(out))


if __name__ == "__main__":
    main()
