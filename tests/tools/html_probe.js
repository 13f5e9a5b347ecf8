/* Run in headless Chromium at the end of a trace-report --html page (the
 * test adds it; the page has no script of its own): appends
 * <pre id="nd-probe"> with a line per problem ("overlap", "badlink",
 * "empty") and per SVG ("svg LABEL texts N"), then "probe done". Text
 * boxes are the browser's own (getBBox), in each SVG's coordinates. */
(function () {
	var out = [], svgs = document.querySelectorAll('svg');
	for (var k = 0; k < svgs.length; k++) {
		var ts = svgs[k].querySelectorAll('text'), bb = [];
		var label = svgs[k].getAttribute('aria-label');
		for (var i = 0; i < ts.length; i++) {
			var b = ts[i].getBBox();
			bb.push([b.x, b.y, b.x + b.width, b.y + b.height,
			    ts[i].textContent]);
		}
		for (var i = 0; i < bb.length; i++)
			for (var j = i + 1; j < bb.length; j++)
				if (bb[i][0] < bb[j][2] && bb[j][0] < bb[i][2] &&
				    bb[i][1] < bb[j][3] && bb[j][1] < bb[i][3])
					out.push('overlap ' + label + ': ' +
					    bb[i][4] + ' | ' + bb[j][4]);
		var r = svgs[k].getBoundingClientRect();
		if (r.width < 10 || r.height < 10)
			out.push('empty ' + label);
		out.push('svg ' + label + ' texts ' + bb.length);
	}
	var as = document.querySelectorAll('a[href^="#"]');
	for (var i = 0; i < as.length; i++)
		if (!document.getElementById(as[i].getAttribute('href').slice(1)))
			out.push('badlink ' + as[i].getAttribute('href'));
	out.push('links ' + as.length);
	out.push('probe done');
	var p = document.createElement('pre');
	p.id = 'nd-probe';
	p.textContent = out.join('\n');
	document.body.appendChild(p);
})();
