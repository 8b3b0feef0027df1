//! A dependency-free SVG chart of measured against published values: one row per figure,
//! each on its own scale, with the published value, the tolerance band around it and the
//! measured mean with its 95% confidence interval.

use std::fmt::Write as _;

use super::{Comparison, Verdict};

const ROW_PX: f64 = 28.0;
const LABEL_PX: f64 = 330.0;
const PLOT_PX: f64 = 360.0;
const VALUE_PX: f64 = 230.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart as an SVG document.
#[must_use]
pub(super) fn comparison_chart(id: &str, title: &str, rows: &[Comparison]) -> String {
    let width = LABEL_PX + PLOT_PX + VALUE_PX;
    let height = 70.0 + ROW_PX * rows.len().max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="20" font-size="14" font-weight="bold">{} — {}</text>
<text x="10" y="38" fill="#555">black bar: published; green band: tolerance; dot and whiskers: measured mean and 95% CI (each row on its own scale)</text>
"##,
        esc(id),
        esc(title)
    );
    for (k, c) in rows.iter().enumerate() {
        let y = 60.0 + ROW_PX * k as f64;
        let hi = [
            c.published + c.tolerance,
            c.measured + c.ci95,
            c.published * 1.25,
        ]
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(1e-9, f64::max);
        let x = |v: f64| LABEL_PX + PLOT_PX * (v / hi).clamp(0.0, 1.0);
        // A one-sided criterion's band runs to the edge of the plot.
        let band = c.bound.band(c.published, c.tolerance);
        // The scoreboard's verdict: the interval in the band, meeting it, or missing it.
        let (fill, mark) = match c.verdict {
            Verdict::Within => ("#1f77b4", "✓"),
            Verdict::Overlaps => ("#ff7f0e", "?"),
            Verdict::Outside => ("#d62728", "✗"),
        };
        let _ = write!(
            s,
            r##"<text x="10" y="{ty}">{label}</text>
<line x1="{x0}" y1="{yc}" x2="{x1}" y2="{yc}" stroke="#ddd"/>
<rect x="{b0}" y="{bt}" width="{bw}" height="14" fill="#cfe8cf"/>
<line x1="{px}" y1="{bt}" x2="{px}" y2="{bb}" stroke="black" stroke-width="2"/>
<line x1="{w0}" y1="{yc}" x2="{w1}" y2="{yc}" stroke="{fill}" stroke-width="1.5"/>
<circle cx="{mx}" cy="{yc}" r="4" fill="{fill}"/>
<text x="{vx}" y="{ty}">{meas:.1}{u} vs {publ:.1}{u} (±{tol:.1}) {mark}</text>
"##,
            ty = y + 4.0,
            label = esc(&c.metric),
            x0 = LABEL_PX,
            x1 = LABEL_PX + PLOT_PX,
            yc = y,
            b0 = x(band.0.max(0.0)),
            bw = x(band.1) - x(band.0.max(0.0)),
            bt = y - 7.0,
            bb = y + 7.0,
            px = x(c.published),
            w0 = x(c.measured - c.ci95),
            w1 = x(c.measured + c.ci95),
            mx = x(c.measured),
            vx = LABEL_PX + PLOT_PX + 10.0,
            meas = c.measured,
            publ = c.published,
            tol = c.tolerance,
            u = esc(c.unit),
            mark = mark,
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_comparison_and_escaped_text() {
        let c = Comparison {
            experiment: "x",
            metric: "share <a&b>".into(),
            unit: "%",
            published: 50.0,
            measured: 52.0,
            ci95: 1.0,
            runs: 3,
            tolerance: 4.0,
            bound: crate::reproduce::Bound::TwoSided,
            within: true,
            verdict: Verdict::Within,
            source: "test",
        };
        let svg = comparison_chart("x", "t", &[c.clone(), c]);
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("share &lt;a&amp;b&gt;"));
        assert!(svg.ends_with("</svg>\n"));
    }
}
