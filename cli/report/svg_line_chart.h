// A line chart as SVG text, drawn by autotune itself so the report needs no plotting library and no
// script: axes with round tick values, axis titles, a title, an optional dashed reference line, and
// one series (straight segments, or steps for a best-so-far curve). The output is standalone SVG
// (it carries its namespace and all styling as attributes), valid both as a file and inline in HTML.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace autotune::cli::report {

// Tick positions for an axis: the finest "nice" step (1, 2 or 5 times a power of ten) that covers
// the range in at most `count` intervals, with the range widened outwards to multiples of the step,
// so the first and last ticks are the axis ends and every label is a round number.
struct Ticks {
  double lo = 0;  // first tick = axis start (a multiple of step)
  double hi = 1;  // last tick = axis end
  double step = 1;
  std::vector<double> values;  // lo, lo + step, ..., hi
};
// A degenerate range (hi <= lo, or not finite) is widened to something drawable. `min_step` (a
// nice number itself, e.g. 1 for counts) keeps ticks off values that cannot occur, like trial 0.5.
Ticks NiceTicks(double lo, double hi, int count = 5, double min_step = 0);
// The value with as many decimals as the step needs ("0.2", "15", "2000"); never "-0".
std::string TickLabel(double value, double step);

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct LineChart {
  std::string title;
  std::string subtitle;  // a smaller second line under the title ("" for none)
  std::string x_title;
  std::string y_title;
  std::vector<ChartPoint> points;  // in increasing x
  // true: each y holds until the next point's x, then jumps (the honest picture of a best-so-far
  // value, which changes only at improvements); false: straight segments between points.
  bool steps = false;
  std::vector<ChartPoint> markers;    // small dots (e.g. where the best improved): a lone point shows too
  std::optional<double> reference_y;  // drawn as a dashed horizontal line with reference_label
  std::string reference_label;
  std::string empty_text = "no data";  // written in the plot area when there are no points
  // The axes cover at least these ranges, and always every point and the reference line.
  double x_min = 0, x_max = 0;
  double x_min_step = 0;  // 1 when x counts something (trials, whole seconds)
  double y_min = 0, y_max = 0;
  int width = 600;
  int height = 320;
};

// The chart as one <svg> element (no XML declaration). Every text is escaped.
std::string RenderSvg(const LineChart& chart);

}  // namespace autotune::cli::report
