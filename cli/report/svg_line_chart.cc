#include "cli/report/svg_line_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/report/escape.h"

namespace autotune::cli::report {

namespace {

// Plot geometry: the data ranges mapped onto the pixel rectangle inside the margins.
struct Frame {
  double left, right, top, bottom;  // pixels
  Ticks x, y;
  double X(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * (right - left); }
  double Y(double v) const { return bottom - (v - y.lo) / (y.hi - y.lo) * (bottom - top); }
};

// Coordinates with one decimal: sub-pixel precision is invisible and would only bloat the file.
std::string Px(double v) { return fmt::format("{:.1f}", v); }

// A line whose stroke comes from the group around it.
std::string Line(double x1, double y1, double x2, double y2) {
  return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", Px(x1), Px(y1), Px(x2), Px(y2));
}

// Escaped text anchored at (x, y); `attributes` are extra (trusted) attributes.
std::string Text(double x, double y, const std::string& text, const char* anchor, const char* fill,
                 const std::string& attributes = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}{}>{}</text>\n", Px(x), Px(y), anchor,
                     fill, attributes.empty() ? "" : " ", attributes, EscapeMarkup(text));
}

}  // namespace

Ticks NiceTicks(double lo, double hi, int count, double min_step) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) {
    // One value: a range around it (from 0 for a positive value, so a lone point sits mid-height).
    if (lo == 0) {
      hi = 1;
    } else if (lo > 0) {
      lo = 0, hi *= 2;
    } else {
      hi = 0, lo *= 2;
    }
  }
  count = std::max(count, 2);
  // The epsilons keep 0.3 / 0.1 = 2.9999... at 3, so a value on a tick does not add an interval.
  auto first_of = [&](double step) { return std::floor(lo / step + 1e-9); };
  auto last_of = [&](double step) { return std::ceil(hi / step - 1e-9); };
  // The finest 1-2-5 step that needs at most `count` intervals: it leaves the least empty room at
  // the ends. `base` is at most the rough step (hi - lo) / count; the list goes on far enough past
  // it that the last one always fits.
  const double base = std::pow(10.0, std::floor(std::log10((hi - lo) / count)));
  double step = base;
  for (double mantissa : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    step = mantissa * base;
    if (step >= min_step && last_of(step) - first_of(step) <= count) break;
  }
  step = std::max(step, min_step);
  const double first = first_of(step), last = last_of(step);
  Ticks t;
  t.step = step;
  t.lo = first * step;
  t.hi = last * step;
  // Tick k is k * step exactly: no error accumulates along the axis.
  for (double k = first; k <= last + 0.5; ++k) t.values.push_back(k * step);
  return t;
}

std::string TickLabel(double value, double step) {
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  if (std::abs(value) < step * 1e-6) value = 0;  // no "-0"
  return fmt::format("{:.{}f}", value, decimals);
}

std::string RenderSvg(const LineChart& c) {
  double x_lo = c.x_min, x_hi = c.x_max, y_lo = c.y_min, y_hi = c.y_max;
  for (const auto* series : {&c.points, &c.markers}) {
    for (const auto& p : *series) {
      x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
    }
  }
  if (c.reference_y) y_lo = std::min(y_lo, *c.reference_y), y_hi = std::max(y_hi, *c.reference_y);
  // Room on the left for tick labels and the rotated y title; below for labels and the x title.
  const double top = c.subtitle.empty() ? 34 : 50;
  const Frame f{
      66, c.width - 18.0, top, c.height - 46.0, NiceTicks(x_lo, x_hi, 6, c.x_min_step), NiceTicks(y_lo, y_hi, 5)};
  const char *grid = "#d9d9d9", *axis = "#333333", *ink = "#222222", *series = "#1f6fb4", *ref = "#c0392b";
  const double mid_x = (f.left + f.right) / 2, mid_y = (f.top + f.bottom) / 2;

  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\" role=\"img\">\n",
      c.width, c.height);
  s += fmt::format("<title>{}</title>\n", EscapeMarkup(c.subtitle.empty() ? c.title : c.title + ": " + c.subtitle));
  s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", c.width, c.height);
  s += Text(c.width / 2.0, 20, c.title, "middle", ink, "font-size=\"13\" font-weight=\"bold\"");
  if (!c.subtitle.empty()) s += Text(c.width / 2.0, 37, c.subtitle, "middle", "#555555", "font-size=\"10\"");

  // Grid lines at every tick, under everything else.
  s += fmt::format("<g stroke=\"{}\" stroke-width=\"1\">\n", grid);
  for (double v : f.y.values) s += Line(f.left, f.Y(v), f.right, f.Y(v));
  for (double v : f.x.values) s += Line(f.X(v), f.top, f.X(v), f.bottom);
  s += "</g>\n";
  // Axes with tick marks, tick labels, axis titles (the y title turned to run along its axis).
  s += fmt::format("<g stroke=\"{}\" stroke-width=\"1\">\n", axis);
  s += Line(f.left, f.bottom, f.right, f.bottom) + Line(f.left, f.top, f.left, f.bottom);
  for (double v : f.x.values) s += Line(f.X(v), f.bottom, f.X(v), f.bottom + 4);
  for (double v : f.y.values) s += Line(f.left - 4, f.Y(v), f.left, f.Y(v));
  s += "</g>\n";
  for (double v : f.x.values) s += Text(f.X(v), f.bottom + 16, TickLabel(v, f.x.step), "middle", ink);
  for (double v : f.y.values) s += Text(f.left - 7, f.Y(v) + 4, TickLabel(v, f.y.step), "end", ink);
  s += Text(mid_x, c.height - 8.0, c.x_title, "middle", ink, "font-size=\"12\"");
  s += Text(16, mid_y, c.y_title, "middle", ink,
            fmt::format("font-size=\"12\" transform=\"rotate(-90 16 {})\"", Px(mid_y)));

  if (c.reference_y) {
    const double y = f.Y(*c.reference_y);
    s += fmt::format("<g stroke=\"{}\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\">\n{}</g>\n", ref,
                     Line(f.left, y, f.right, y));
    // Below the line at the right: a best-so-far curve is above it there (it ends at the best).
    s += Text(f.right - 4, y + 13, c.reference_label, "end", ref, "font-size=\"10\"");
  }

  if (c.points.empty()) {
    s += Text(mid_x, mid_y, c.empty_text, "middle", "#888888", "font-size=\"12\"");
  } else {
    std::string pts;
    for (size_t i = 0; i < c.points.size(); ++i) {
      const auto& p = c.points[i];
      if (c.steps && i > 0) pts += fmt::format(" {},{}", Px(f.X(p.x)), Px(f.Y(c.points[i - 1].y)));
      pts += fmt::format("{}{},{}", pts.empty() ? "" : " ", Px(f.X(p.x)), Px(f.Y(p.y)));
    }
    s += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"{}\"/>\n", series,
        pts);
  }
  if (!c.markers.empty()) {
    s += fmt::format("<g fill=\"{}\">\n", series);
    for (const auto& p : c.markers) {
      s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2.5\"/>\n", Px(f.X(p.x)), Px(f.Y(p.y)));
    }
    s += "</g>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace autotune::cli::report
