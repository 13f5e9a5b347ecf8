#!/usr/bin/env python3
"""Checks of a trace-report --html page, independent of the C code.

usage: html_check.py summary PAGE REPORT.json
       html_check.py toc PAGE
       html_check.py svg PAGE
       html_check.py hostlane PAGE STREAM.ndjson
       html_check.py probe PAGE OUT     (OUT: PAGE with tests/tools/html_probe.js)
       html_check.py probe-ui PAGE OUT  (OUT: PAGE with tests/tools/html_ui.js)
       html_check.py ui DOM             (what html_ui.js saw the page do)
       html_check.py tables PAGE REPORT.md

Each prints "ok N checks" or fails with a message (exit 1).
  summary   the summary section comes first (after the title, before the
            contents); its findings are the report's first three, in order,
            each linked to its section and with the time it explains; its
            bar's parts have the widths of the JSON breakdown of all devices.
  toc       headings have unique ids; the contents link every heading, in
            order; every in-page link resolves.
  svg       every <svg> is well-formed XML; axes have tick labels in human
            units (0, N ns|us|ms|s, N %) at increasing positions; the placed
            labels (step values, step numbers, gap labels) do not overlap,
            their widths estimated at 0.6 em a character.
  tables    the page's tables are the Markdown report's, in order: the same
            head and cells (Markdown escapes, code and strong marks taken
            off); every cell shown shortened (with "…") has the full
            text as its title, of which the shown pieces are parts, in order.
  hostlane  the strip over the profile window: one window per device from
            its first device op to its last op's end; the host lane's rects
            are the union of the host activity (cat cpu_op spans) clipped to
            that window, at the strip's scale (1000 px for the window).
"""
import html.parser
import json
import re
import sys
import xml.etree.ElementTree as ET

NCHECK = [0]


def check(cond, msg):
    NCHECK[0] += 1
    if not cond:
        sys.exit("FAIL: " + msg)


class Tree(html.parser.HTMLParser):
    """The elements of the page in document order: (tag, attrs, text)."""

    VOID = ("meta", "br", "hr", "img", "input", "link")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.els, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": "", "parents":
             [p["tag"] + "#" + p["attrs"].get("id", "") for p in self.stack],
             "pclass": self.stack[-1]["attrs"].get("class") if self.stack
             else None}
        self.els.append(e)
        if tag not in self.VOID:
            self.stack.append(e)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        while self.stack:
            e = self.stack.pop()
            if e["tag"] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data


def parse(path):
    t = Tree()
    t.feed(open(path, encoding="utf-8").read())
    return t.els


def human(ns):
    """nd_rep_put_dur"""
    a = abs(ns)
    if a < 1000:
        return "%d ns" % ns
    if a < 1000000:
        return "%.1f us" % (ns / 1e3)
    if a < 1000000000:
        return "%.3f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)


def summary(page, rep):
    els = parse(page)
    j = json.load(open(rep))
    order = [e["tag"] + "#" + e["attrs"].get("id", "") for e in els
             if e["tag"] in ("h1", "section", "nav", "h2")]
    check(order[0] == "h1#" and order[1] == "section#summary" and
          order[3] == "nav#contents",
          "summary after the title, then the contents: %s" % order[:5])
    summ = [e for e in els if "section#summary" in e["parents"]]
    verdict = [e for e in summ if e["attrs"].get("class") == "verdict"]
    check(len(verdict) == 1 and verdict[0]["text"].startswith("Verdict: "),
          "one verdict")
    items = [e for e in summ if e["tag"] == "li"]
    fnd = j["findings"]
    check(len(items) == min(3, len(fnd)), "%d findings listed, want %d" %
          (len(items), min(3, len(fnd))))
    ids = {e["attrs"]["id"]: e["text"] for e in els if "id" in e["attrs"]}
    links = [e for e in summ if e["tag"] == "a"]
    for k, li in enumerate(items):
        f = fnd[k]
        check(li["text"].startswith(f["rule"] + ": " + f["statement"]),
              "finding %d: %r" % (k, li["text"]))
        href = links[k]["attrs"]["href"]
        check(ids.get(href[1:]) == f["rule"],
              "finding %d links %s, a heading %r" % (k, href,
                                                      ids.get(href[1:])))
        if f["explains_ns"] > 0:
            want = "Explains %s, %.1f %% of the window." % (
                human(f["explains_ns"]), f["explains_pct"])
            check(li["text"].endswith(want), "finding %d: %r, want %r" %
                  (k, li["text"], want))
    bd = j["breakdown"]["all_devices"]
    parts = ["compute_ns", "communication_ns", "memory_ns", "host_ns",
             "idle_ns"]
    total = sum(bd[p] for p in parts)
    check(total == bd["dur_ns"], "the parts add up to the window")
    if total == 0:
        note = [e for e in summ if e["tag"] == "p" and
                e["text"].startswith("Time breakdown: none: ")]
        check(len(note) == 1, "no breakdown: a note says why")
        check(not any(e["tag"] == "svg" for e in summ), "no bar")
        return
    rects = [e for e in summ if e["tag"] == "rect" and
             e["pclass"] == "part"]
    want = [700.0 * bd[p] / total for p in parts if bd[p] > 0]
    got = [float(e["attrs"]["width"]) for e in rects]
    check(len(got) == len(want) and
          all(abs(a - b) < 0.006 for a, b in zip(got, want)),
          "bar widths %s, want %s" % (got, want))
    x = 0.0
    for e, w in zip(rects, want):
        check(abs(float(e["attrs"]["x"]) - x) < 0.006, "bar part at x %s"
              % e["attrs"]["x"])
        x += w


def toc(page):
    els = parse(page)
    heads = [e for e in els if e["tag"] in ("h2", "h3") and
             "nav#contents" not in e["parents"] and
             "section#summary" not in e["parents"]]
    ids = [e["attrs"].get("id") for e in els if "id" in e["attrs"]]
    check(len(ids) == len(set(ids)), "ids unique")
    check(all(h["attrs"].get("id") for h in heads), "every heading has an id")
    nav = [e for e in els if e["tag"] == "a" and "nav#contents" in
           e["parents"]]
    hrefs = [a["attrs"]["href"] for a in nav]
    want = ["#" + h["attrs"]["id"] for h in heads]
    if hrefs and hrefs[0] == "#summary":
        hrefs = hrefs[1:]
        check("summary" in ids, "#summary resolves")
    check(hrefs == want, "contents %s, headings %s" % (hrefs, want))
    for a, h in zip(nav[-len(heads):], heads):
        check(a["text"] == h["text"], "link text %r, heading %r" %
              (a["text"], h["text"]))
    for e in els:
        href = e["attrs"].get("href", "")
        if e["tag"] == "a" and href.startswith("#"):
            check(href[1:] in ids, "link %s resolves" % href)


TICK = re.compile(r"^(0|[0-9]+(\.[0-9]+)? (ns|us|ms|s)|[0-9]+ %)$")


def axis_ticks(svg, label):
    """The tick labels of the <g class="axis"> of svg: human units and
    increasing (the step chart's go up: y decreasing)."""
    for g in svg.iter("{http://www.w3.org/2000/svg}g"):
        if g.get("class") != "axis":
            continue
        ts = [t for t in g.iter("{http://www.w3.org/2000/svg}text")
              if TICK.match(t.text or "")]
        check(len(ts) >= 2, "%s: %d tick labels" % (label, len(ts)))
        pos = [(float(t.get("x")), -float(t.get("y"))) for t in ts]
        xs = [p[0] for p in pos]
        ys = [p[1] for p in pos]
        check(xs == sorted(xs) and ys == sorted(ys) and
              len(set(xs)) + len(set(ys)) > len(ts),
              "%s: ticks in order" % label)
        return len(ts)
    check(False, "%s: no axis" % label)
    return 0


def placed(svg, label):
    """Labels placed by nd_rep_lab_fit: no two overlap (0.6 em a char)."""
    rows = {}
    for t in svg.iter("{http://www.w3.org/2000/svg}text"):
        if t.get("class") not in ("value", "step", "gap-label"):
            continue
        fs = float(t.get("font-size"))
        x = float(t.get("x"))
        rows.setdefault((t.get("class"), None if t.get("class") == "value"
                         else t.get("y")), []).append(
            (x, x + 0.6 * fs * len(t.text), t.text))
    for k, v in rows.items():
        v.sort()
        for a, b in zip(v, v[1:]):
            check(a[1] <= b[0], "%s: labels %r and %r overlap" %
                  (label, a[2], b[2]))


def svgs(page):
    s = open(page, encoding="utf-8").read()
    found = re.findall(r"<svg\b.*?</svg>", s, re.S)
    check(len(found) > 0, "an svg")
    kinds = []
    for x in found:
        try:
            svg = ET.fromstring(x)
        except ET.ParseError as e:
            check(False, "svg not well-formed: %s: %s" % (e, x[:80]))
        label = svg.get("aria-label")
        kinds.append(label)
        if label in ("step times", "time breakdown") or \
                label.startswith("timeline of"):
            axis_ticks(svg, label)
        placed(svg, label)
    print("charts: " + ", ".join(kinds))


def hostlane(page, stream):
    dev, host = [], []
    for line in open(stream):
        e = json.loads(line)
        if e.get("type") != "span":
            continue
        iv = (e["ts_ns"], e["ts_ns"] + e["dur_ns"])
        (dev if "device" in e else host if e.get("cat") == "cpu_op"
         else []).append(iv)
    lo, hi = min(a for a, _ in dev), max(b for _, b in dev)
    union = []
    for a, b in sorted(host):
        a, b = max(a, lo), min(b, hi)
        if b <= a:
            continue
        if union and a <= union[-1][1]:
            union[-1][1] = max(union[-1][1], b)
        else:
            union.append([a, b])
    scale = 1000.0 / (hi - lo)
    want = ["x=\"%.2f\" width=\"%.2f\"" % (10 + (a - lo) * scale,
                                           (b - a) * scale) for a, b in union]
    s = open(page, encoding="utf-8").read()
    got = re.findall(r'<rect class="host" x="([^"]*)" y="[^"]*" '
                     r'width="([^"]*)"', s)
    got = ["x=\"%s\" width=\"%s\"" % g for g in got]
    check(got == want, "host rects %s, want %s" % (got, want))
    check('aria-label="timeline of the profile window"' in s,
          "a profile-window strip")
    check("profile window, ts_ns %d, %s</text>" % (lo, human(hi - lo)) in s,
          "the window %d, %s" % (lo, human(hi - lo)))


def probe(page, out, name="html_probe.js"):
    js = open(__file__.rsplit("/", 1)[0] + "/" + name).read()
    s = open(page, encoding="utf-8").read()
    check(s.count("<script") == 1 and '<script id="nd-ui">' in s,
          "the page's one script is its own (nd-ui), inline")
    check(not re.search(r'(src|href)="(https?:)?//', s),
          "the page fetches nothing")
    open(out, "w", encoding="utf-8").write(
        s.replace("</body>", "<script>" + js + "</script></body>"))


def dur(t):
    """A duration cell of the report ("12.5 us") in ns, read here."""
    v, u = t.split()
    return float(v) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[u]


def ui(dom):
    """Judge what html_ui.js saw the page do."""
    s = open(dom, encoding="utf-8").read()
    s = s[s.rindex('<pre id="nd-ui-test">') + len('<pre id="nd-ui-test">'):]
    s = html.unescape(s[:s.index("</pre>")])
    f = {}
    for line in s.split("\n"):
        k, _, v = line.partition("\t" if "\t" in line else " ")
        f.setdefault(k, []).append(v)
    before = f["before"][0].split("\t")
    first = f["first"][0].split("\t")
    second = f["second"][0].split("\t")
    check(sorted(first) == sorted(before), "sorting keeps the rows")
    check([dur(x) for x in first] == sorted((dur(x) for x in before),
                                            reverse=True),
          "first click: largest first: %s" % first)
    check([dur(x) for x in second] == sorted(dur(x) for x in before),
          "second click: smallest first: %s" % second)
    check(f["aria"] == ["descending", "ascending"], "aria-sort %s" % f["aria"])
    check(f["filter-box"] == ["nd-filter"], "a filter box above the table")
    q = f["query"][0].lower()
    want = [r for r in f["rows"][0].split("\t") if q in r.lower()]
    shown = f["shown"][0].split("\t")
    check(shown == want or (want and set(shown) >= set(want)),
          "filter %r shows %s, want %s" % (q, shown, want))
    check(len(shown) < len(f["rows"][0].split("\t")),
          "the filter hides rows")
    vb = [float(x) for x in f["viewBox"][0].split()]
    zb = [float(x) for x in f["zoomed"][0].split()]
    rb = [float(x) for x in f["reset"][0].split()]
    check(abs(zb[2] - vb[2] / 1.5625) < 1e-6 and zb[0] > 0,
          "two wheel steps zoom 1.25 x 1.25 around the middle: %s" % zb)
    check(rb == vb, "a double click resets the view")
    print("ui ok", f["column"][0], len(before), "rows")


def md_cells(line):
    """The cells of a Markdown table line, unescaped, marks taken off."""
    cells, cur, i = [], "", 1
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            cur += line[i + 1]
            i += 2
            continue
        if c == "|":
            cells.append(cur.strip())
            cur = ""
        elif c == "`":
            pass
        elif c == "*" and line[i + 1:i + 2] == "*":
            i += 1
        else:
            cur += c
        i += 1
    return cells


def md_tables(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    tables, i = [], 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and \
                lines[i + 1].startswith("|---"):
            t = [md_cells(lines[i])]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                t.append(md_cells(lines[i]))
                i += 1
            tables.append(t)
        else:
            i += 1
    return tables


class Tables(html.parser.HTMLParser):
    """The tables of a page: rows of cells (text, title)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self.cell = ["", dict(attrs).get("title")]

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append((self.cell[0].strip(), self.cell[1]))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[0] += data


def tables(page, md):
    h = Tables()
    h.feed(open(page, encoding="utf-8").read())
    m = md_tables(md)
    check(len(h.tables) == len(m), "%d tables in the page, %d in the "
          "Markdown" % (len(h.tables), len(m)))
    for k, (ht, mt) in enumerate(zip(h.tables, m)):
        check([[c[0] for c in r] for r in ht] == mt,
              "table %d differs: %r against %r" % (k, ht[:3], mt[:3]))
        for r in ht[1:]:
            for text, title in r:
                if "\u2026" not in text:
                    continue
                check(title, "table %d: %r has no title" % (k, text))
                at = 0
                for piece in text.split("\u2026"):
                    at = title.find(piece, at)
                    check(at >= 0, "table %d: %r is not a part of %r" %
                          (k, piece, title))
                    at += len(piece)


def main():
    cmd = sys.argv[1]
    if cmd == "summary":
        summary(sys.argv[2], sys.argv[3])
    elif cmd == "toc":
        toc(sys.argv[2])
    elif cmd == "svg":
        svgs(sys.argv[2])
    elif cmd == "tables":
        tables(sys.argv[2], sys.argv[3])
    elif cmd == "hostlane":
        hostlane(sys.argv[2], sys.argv[3])
    elif cmd == "ui":
        ui(sys.argv[2])
    elif cmd == "probe-ui":
        probe(sys.argv[2], sys.argv[3], "html_ui.js")
    elif cmd == "probe":
        probe(sys.argv[2], sys.argv[3])
        return
    else:
        sys.exit(__doc__)
    print("ok %d checks" % NCHECK[0])


if __name__ == "__main__":
    main()
