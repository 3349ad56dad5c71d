//! `bench --plot`: the growth of the safe cell with calls as a standalone SVG file, one panel
//! per figure (unique states, wall seconds, peak memory), calls on x and a log scale on y.
//! Written by hand, as `svg.rs` is: a few lines, polylines and labels need no plotting crate.

use crate::report::svg::escape;
use std::fmt::Write;

/// One row of the growth table, at one number of calls.
#[derive(Clone, Copy, Debug)]
pub struct GrowthPoint {
    /// Logical calls.
    pub calls: u32,
    /// Unique states.
    pub states: f64,
    /// Wall seconds of the search.
    pub seconds: f64,
    /// Peak resident memory, MiB.
    pub peak_mib: f64,
    /// Whether the search stopped at its budget before it ended (its figures are lower bounds).
    pub partial: bool,
}

const PANEL_W: f64 = 300.0;
const PANEL_H: f64 = 260.0;
/// Room left of, above, right of and below a panel's plot area.
const LEFT: f64 = 64.0;
const TOP: f64 = 40.0;
const RIGHT: f64 = 16.0;
const BOTTOM: f64 = 48.0;
/// Height of the title line above the panels.
const HEAD: f64 = 36.0;
/// Height of the line of notes below them.
const FOOT: f64 = 18.0;

/// One panel: its title, the figure it plots, the smallest value a log scale shows for it
/// (smaller ones are drawn at it).
struct Series {
    name: &'static str,
    title: &'static str,
    colour: &'static str,
    value: fn(&GrowthPoint) -> f64,
    floor: f64,
}

const SERIES: [Series; 3] = [
    Series { name: "states", title: "unique states", colour: "#1f5fa8", value: |p| p.states, floor: 1.0 },
    Series { name: "seconds", title: "wall seconds", colour: "#b3471b", value: |p| p.seconds, floor: 1e-3 },
    Series { name: "peak-mib", title: "peak memory, MiB", colour: "#2e7d32", value: |p| p.peak_mib, floor: 1.0 },
];

/// A power of ten as a short label: 1k, 10M, 0.01.
fn decade_label(k: i32) -> String {
    match k {
        ..=-1 => format!("{}", 10f64.powi(k)),
        0..=2 => format!("{}", 10u64.pow(k as u32)),
        3..=5 => format!("{}k", 10u64.pow(k as u32 - 3)),
        6..=8 => format!("{}M", 10u64.pow(k as u32 - 6)),
        _ => format!("{}G", 10u64.pow(k as u32 - 9)),
    }
}

/// The plot of `points` (ordered by calls) as a complete SVG document: one `<polyline
/// class="series">` per figure, a circle per point (hollow where the search was partial), each
/// panel's x axis labelled "calls".
pub fn growth_svg(points: &[GrowthPoint], caption: &str) -> String {
    let width = PANEL_W * SERIES.len() as f64;
    let height = HEAD + PANEL_H + FOOT;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12" role="img" aria-label="growth with calls">"#
    );
    let _ = write!(out, r##"<rect width="{width}" height="{height}" fill="#fff"/>"##);
    let _ = write!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(caption)
    );
    for (i, s) in SERIES.iter().enumerate() {
        panel(&mut out, points, s, i as f64 * PANEL_W, HEAD);
    }
    if points.iter().any(|p| p.seconds < SERIES[1].floor) {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" font-size="11">times under 1 ms are drawn at 1 ms</text>"#,
            LEFT,
            height - 6.0
        );
    }
    if points.iter().any(|p| p.partial) {
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end" font-size="11">hollow: stopped at its memory budget (a lower bound)</text>"#,
            width - RIGHT,
            height - 6.0
        );
    }
    out.push_str("</svg>\n");
    out
}

/// One panel at (`x0`, `y0`).
fn panel(out: &mut String, points: &[GrowthPoint], s: &Series, x0: f64, y0: f64) {
    let (plot_w, plot_h) = (PANEL_W - LEFT - RIGHT, PANEL_H - TOP - BOTTOM);
    let (left, top) = (x0 + LEFT, y0 + TOP);
    let values: Vec<f64> = points.iter().map(|p| (s.value)(p).max(s.floor)).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let (lo_k, mut hi_k) =
        if values.is_empty() { (0, 1) } else { (lo.log10().floor() as i32, hi.log10().ceil() as i32) };
    if hi_k <= lo_k {
        hi_k = lo_k + 1;
    }
    let first = points.first().map_or(1, |p| p.calls);
    let last = points.last().map_or(1, |p| p.calls).max(first + 1);
    let px = |calls: u32| left + plot_w * f64::from(calls - first) / f64::from(last - first);
    let py = |v: f64| top + plot_h * (1.0 - (v.log10() - f64::from(lo_k)) / f64::from(hi_k - lo_k));
    let _ = write!(out, r#"<g class="panel" data-series="{}">"#, s.name);
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{}</text>"#,
        left + plot_w / 2.0,
        y0 + 20.0,
        s.title
    );
    for k in lo_k..=hi_k {
        let y = py(10f64.powi(k));
        let _ = write!(
            out,
            r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 6.0,
            y + 4.0,
            decade_label(k)
        );
    }
    for calls in first..=last {
        let x = px(calls);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{calls}</text>"##,
            top + plot_h,
            top + plot_h + 5.0,
            top + plot_h + 18.0
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/><text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">calls</text>"##,
        left + plot_w / 2.0,
        top + plot_h + 36.0
    );
    let coords: Vec<String> =
        points.iter().zip(&values).map(|(p, &v)| format!("{:.1},{:.1}", px(p.calls), py(v))).collect();
    let _ = write!(
        out,
        r#"<polyline class="series" data-series="{}" points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
        s.name,
        coords.join(" "),
        s.colour
    );
    for (p, &v) in points.iter().zip(&values) {
        let fill = if p.partial { "#fff" } else { s.colour };
        let _ = write!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{fill}" stroke="{}" stroke-width="2"><title>{} calls: {}{}</title></circle>"#,
            px(p.calls),
            py(v),
            s.colour,
            p.calls,
            figure((s.value)(p)),
            if p.partial { " (partial)" } else { "" }
        );
    }
    out.push_str("</g>");
}

/// A figure for a tooltip: whole numbers as they are, small ones to three significant digits.
fn figure(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(calls: u32, states: f64) -> GrowthPoint {
        GrowthPoint { calls, states, seconds: states / 1e6, peak_mib: 14.0 + states / 1e4, partial: calls == 3 }
    }

    #[test]
    fn one_polyline_per_figure_with_a_point_per_row_and_decades_on_y() {
        let svg = growth_svg(&[point(1, 286.0), point(2, 17_012.0), point(3, 729_682.0)], "growth");
        assert!(svg.starts_with("<svg xmlns=") && svg.trim_end().ends_with("</svg>"), "{svg}");
        assert_eq!(svg.matches(r#"<polyline class="series""#).count(), 3, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 9, "{svg}");
        assert_eq!(svg.matches(">calls</text>").count(), 3, "{svg}");
        assert!(svg.contains(">100</text>") && svg.contains(">1M</text>"), "states from 100 to 1M: {svg}");
        assert!(svg.contains("(partial)") && svg.contains("hollow"), "{svg}");
    }

    #[test]
    fn decades_read_as_people_write_them() {
        assert_eq!(decade_label(-2), "0.01");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(4), "10k");
        assert_eq!(decade_label(7), "10M");
        assert_eq!(decade_label(9), "1G");
    }
}
