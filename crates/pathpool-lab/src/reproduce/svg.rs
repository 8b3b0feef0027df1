//! Dependency-free SVG charts: measured against published values, one row per figure, each on
//! its own scale, with the published value, the tolerance band around it and the measured
//! mean with its 95% confidence interval; and line charts of a figure's series.

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

/// Most points drawn of one series of a [`line_chart`]: more add bytes, not detail.
const MAX_POINTS: usize = 2000;
const CHART_W: f64 = 640.0;
const CHART_H: f64 = 360.0;
const MARGIN_L: f64 = 70.0;
const MARGIN_T: f64 = 50.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

/// A line chart as an SVG document: each series a polyline through its `(x, y)` points in
/// their order (at most [`MAX_POINTS`], picked evenly), the x axis over the points' range
/// and the y axis from 0 to the largest y, five ticks each, and a legend.
#[must_use]
pub(super) fn line_chart(
    title: &str,
    (x_label, y_label): (&str, &str),
    series: &[(&str, Vec<(f64, f64)>)],
) -> String {
    let points = || series.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = points().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (x0, x1) = if x0 < x1 { (x0, x1) } else { (0.0, 1.0) };
    let y1 = points().fold(0.0_f64, |m, p| m.max(p.1)).max(1e-9);
    let x = |v: f64| MARGIN_L + CHART_W * (v - x0) / (x1 - x0);
    let y = |v: f64| MARGIN_T + CHART_H * (1.0 - v / y1);
    let (width, height) = (MARGIN_L + CHART_W + 180.0, MARGIN_T + CHART_H + 50.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="20" font-size="14" font-weight="bold">{}</text>
<rect x="{MARGIN_L}" y="{MARGIN_T}" width="{CHART_W}" height="{CHART_H}" fill="none" stroke="#999"/>
<text x="{}" y="{}" text-anchor="middle">{}</text>
<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>
"##,
        esc(title),
        MARGIN_L + CHART_W / 2.0,
        MARGIN_T + CHART_H + 40.0,
        esc(x_label),
        MARGIN_T + CHART_H / 2.0,
        MARGIN_T + CHART_H / 2.0,
        esc(y_label),
    );
    for vx in ticks(x0, x1) {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
            x(vx),
            MARGIN_T + CHART_H + 16.0,
            tick(vx),
        );
    }
    for vy in ticks(0.0, y1) {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{}</text>"##,
            MARGIN_L - 6.0,
            y(vy) + 4.0,
            tick(vy),
        );
    }
    for (i, (name, pts)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let step = pts.len().div_ceil(MAX_POINTS).max(1);
        // The last point too, when the step passes over it.
        let last = pts.last().filter(|_| (pts.len() - 1) % step != 0);
        let mut line = String::new();
        for p in pts.iter().step_by(step).chain(last) {
            let _ = write!(line, "{:.1},{:.1} ", x(p.0), y(p.1));
        }
        let ly = MARGIN_T + 16.0 * i as f64 + 10.0;
        let lx = MARGIN_L + CHART_W + 12.0;
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>
<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/>
<text x="{}" y="{}">{}</text>
"##,
            line.trim_end(),
            lx + 18.0,
            lx + 24.0,
            ly + 4.0,
            esc(name),
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Round values from `lo` to `hi` a step of 1, 2 or 5 times a power of ten apart, the step
/// that gives three to eight of them.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let decade = 10f64.powf((span / 5.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&st| span / st <= 7.0)
        .unwrap_or(10.0 * decade);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick label: as few digits as the value needs.
fn tick(v: f64) -> String {
    let t = format!("{v:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
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

    /// A polyline per series through its points, scaled into the plot, the last point kept
    /// when a long series is thinned; a legend entry per series.
    #[test]
    fn a_line_chart_draws_each_series_within_the_plot() {
        let long: Vec<(f64, f64)> = (0..=5000).map(|k| (f64::from(k), f64::from(k))).collect();
        let svg = line_chart(
            "seq <1>",
            ("time", "MB"),
            &[("a", vec![(0.0, 0.0), (10.0, 2.0)]), ("b", long)],
        );
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("seq &lt;1&gt;"));
        // Series a: from the plot's left at y = 0 to 10/5000 of the width at 2/5000 of the
        // height.
        let a = svg
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(a, "70.0,410.0 71.3,409.9");
        let b = svg
            .split("points=\"")
            .nth(2)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let pts: Vec<&str> = b.split(' ').collect();
        assert!(pts.len() <= MAX_POINTS + 1);
        assert_eq!(pts.last(), Some(&"710.0,50.0"));
    }

    #[test]
    fn ticks_are_round_values_inside_the_range() {
        assert_eq!(ticks(0.0, 10.0), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(2.0, 14.34), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]);
        assert_eq!(ticks(0.0, 0.37), [0.0, 0.1, 0.2, 0.30000000000000004]);
        assert_eq!(tick(0.30000000000000004), "0.3");
    }
}
