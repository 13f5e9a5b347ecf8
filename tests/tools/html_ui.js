/* Run in headless Chromium after a trace-report --html page's own script
 * (the test appends it): drives the page as a user would -- sorts a
 * column of durations twice, filters a table, zooms the timeline -- and
 * appends <pre id="nd-ui-test"> with what the page then showed, one fact a
 * line, for html_check.py ui to judge by its own reading of the values. */
(function () {
	var out = [], tabs = document.querySelectorAll("table"), tb = null, col = -1;
	function cells(t, c) {
		return [].slice.call(t.rows, 1).filter(function (r) {
			return r.style.display !== "none";
		}).map(function (r) { return r.cells[c] ? r.cells[c].textContent : ""; });
	}
	/* the first table of more than three rows with a column in ns/us/ms/s */
	for (var i = 0; i < tabs.length && !tb; i++) {
		if (tabs[i].rows.length <= 4) continue;
		for (var c = 1; c < tabs[i].rows[1].cells.length; c++)
			if (/^[0-9.]+ (ns|us|ms|s)$/.test(tabs[i].rows[1].cells[c].textContent)) {
				tb = tabs[i]; col = c; break;
			}
	}
	if (tb) {
		out.push("column " + tb.rows[0].cells[col].textContent);
		out.push("before\t" + cells(tb, col).join("\t"));
		tb.rows[0].cells[col].click();
		out.push("first\t" + cells(tb, col).join("\t"));
		out.push("aria " + tb.rows[0].cells[col].getAttribute("aria-sort"));
		tb.rows[0].cells[col].click();
		out.push("second\t" + cells(tb, col).join("\t"));
		out.push("aria " + tb.rows[0].cells[col].getAttribute("aria-sort"));
		var all = cells(tb, 0), q = all[all.length - 1].slice(0, 6);
		var f = tb.previousElementSibling;
		out.push("filter-box " + (f && f.className));
		out.push("rows\t" + all.join("\t"));
		f.value = q;
		f.dispatchEvent(new Event("input"));
		out.push("query\t" + q);
		out.push("shown\t" + cells(tb, 0).join("\t"));
	}
	var sv = document.querySelector('svg[aria-label^="timeline"]');
	if (sv) {
		out.push("viewBox " + sv.getAttribute("viewBox"));
		var r = sv.getBoundingClientRect();
		sv.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, cancelable: true,
		    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
		sv.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, cancelable: true,
		    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
		out.push("zoomed " + sv.getAttribute("viewBox"));
		sv.dispatchEvent(new MouseEvent("dblclick"));
		out.push("reset " + sv.getAttribute("viewBox"));
	}
	out.push("ui done");
	var pre = document.createElement("pre");
	pre.id = "nd-ui-test";
	pre.textContent = out.join("\n");
	document.body.appendChild(pre);
})();
