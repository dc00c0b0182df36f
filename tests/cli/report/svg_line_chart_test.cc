// The SVG line chart: round tick values, and well-formed, escaped SVG that draws what it is given.
#include "cli/report/svg_line_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "cli/report/escape.h"
#include "tests/cli/report/markup_check.h"

namespace autotune::cli::report {
namespace {

using testing::Count;
using testing::PolylineVertices;
using testing::TagBalanceError;

std::vector<std::string> Labels(const Ticks& t) {
  std::vector<std::string> out;
  for (double v : t.values) out.push_back(TickLabel(v, t.step));
  return out;
}

TEST(NiceTicks, StepsAreOneTwoOrFiveTimesAPowerOfTenAndCoverTheRangeTightly) {
  EXPECT_EQ(Labels(NiceTicks(0, 97)), (std::vector<std::string>{"0", "20", "40", "60", "80", "100"}));
  EXPECT_EQ(Labels(NiceTicks(0, 1)), (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  EXPECT_EQ(Labels(NiceTicks(0, 832, 6)), (std::vector<std::string>{"0", "200", "400", "600", "800", "1000"}));
  EXPECT_EQ(Labels(NiceTicks(0.3, 0.71)), (std::vector<std::string>{"0.3", "0.4", "0.5", "0.6", "0.7", "0.8"}));
  EXPECT_EQ(Labels(NiceTicks(-3, 7)), (std::vector<std::string>{"-5", "0", "5", "10"}));
  // The finest step that fits: 0..25000 rather than 0..30000 by 10000, for a best of 20500 GFLOP/s.
  EXPECT_EQ(Labels(NiceTicks(0, 21525)), (std::vector<std::string>{"0", "5000", "10000", "15000", "20000", "25000"}));
  EXPECT_EQ(Labels(NiceTicks(0, 0.0042)),
            (std::vector<std::string>{"0.000", "0.001", "0.002", "0.003", "0.004", "0.005"}));
  for (auto [lo, hi] : {std::pair{0.0, 97.0}, {0.0, 12345.0}, {0.0, 0.0042}, {17.0, 18.5}, {0.0, 3.0}, {-50.0, 1e6}}) {
    SCOPED_TRACE(std::to_string(lo) + " .. " + std::to_string(hi));
    const Ticks t = NiceTicks(lo, hi);
    EXPECT_LE(t.lo, lo);
    EXPECT_GE(t.hi, hi);
    ASSERT_GE(t.values.size(), 3u);
    EXPECT_LE(t.values.size(), 11u);
    EXPECT_DOUBLE_EQ(t.values.front(), t.lo);
    EXPECT_DOUBLE_EQ(t.values.back(), t.hi);
    const double mantissa = t.step / std::pow(10.0, std::floor(std::log10(t.step)));
    EXPECT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9)
        << t.step;
    for (size_t i = 1; i < t.values.size(); ++i) EXPECT_NEAR(t.values[i] - t.values[i - 1], t.step, t.step * 1e-9);
  }
}

TEST(NiceTicks, AMinimumStepKeepsCountsWhole) {
  EXPECT_EQ(Labels(NiceTicks(0, 2, 6)), (std::vector<std::string>{"0.0", "0.5", "1.0", "1.5", "2.0"}));
  EXPECT_EQ(Labels(NiceTicks(0, 2, 6, 1)), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(Labels(NiceTicks(0, 0, 6, 1)), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(Labels(NiceTicks(0, 832, 6, 1)), (std::vector<std::string>{"0", "200", "400", "600", "800", "1000"}));
}

TEST(NiceTicks, DegenerateRangesStillGiveAnAxis) {
  EXPECT_EQ(Labels(NiceTicks(0, 0)), (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  const Ticks one = NiceTicks(500, 500);  // a lone value sits inside the axis, not on its edge
  EXPECT_LE(one.lo, 0);
  EXPECT_GT(one.hi, 500);
  const Ticks nan = NiceTicks(NAN, INFINITY);
  EXPECT_FALSE(nan.values.empty());
  const Ticks reversed = NiceTicks(10, 0);
  EXPECT_LE(reversed.lo, 0);
  EXPECT_GE(reversed.hi, 10);
}

TEST(TickLabel, UsesTheDecimalsTheStepNeedsAndNeverMinusZero) {
  EXPECT_EQ(TickLabel(1500, 500), "1500");
  EXPECT_EQ(TickLabel(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(TickLabel(-1e-17, 0.1), "0.0");
  EXPECT_EQ(TickLabel(0.05, 0.05), "0.05");
}

TEST(Escape, ReplacesMarkupCharactersAndControlCharacters) {
  EXPECT_EQ(EscapeMarkup("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&#39;d");
  EXPECT_EQ(EscapeMarkup(std::string("x\x01y\tz")), "x y\tz");
  EXPECT_EQ(EscapeMarkup("plain text"), "plain text");
}

LineChart Sample() {
  LineChart c;
  c.title = "Best <throughput> & \"more\"";
  c.subtitle = "gemm[M=1] on A&B";
  c.x_title = "trial";
  c.y_title = "GFLOP/s";
  c.points = {{1, 10}, {4, 30}, {9, 50}, {20, 50}};
  c.markers = {{1, 10}, {4, 30}, {9, 50}};
  c.steps = true;
  c.reference_y = 45;
  c.reference_label = "90% of best";
  c.x_max = 20;
  return c;
}

TEST(SvgLineChart, IsOneWellFormedSvgElementWithEscapedText) {
  const std::string svg = RenderSvg(Sample());
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << svg.substr(0, 80);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(TagBalanceError(svg), "");
  EXPECT_EQ(Count(svg, "<svg"), 1);
  EXPECT_NE(svg.find("Best &lt;throughput&gt; &amp; &quot;more&quot;"), std::string::npos);
  EXPECT_NE(svg.find("gemm[M=1] on A&amp;B"), std::string::npos);
  EXPECT_EQ(svg.find("<throughput>"), std::string::npos);
  EXPECT_EQ(svg.find("A&B"), std::string::npos);
}

TEST(SvgLineChart, DrawsEveryPointAxesTicksTitlesAndTheDashedReference) {
  LineChart c = Sample();
  const std::string svg = RenderSvg(c);
  // Steps: each point after the first adds a corner, so 4 points are 7 vertices.
  EXPECT_EQ(PolylineVertices(svg), 7);
  EXPECT_EQ(Count(svg, "<circle"), 3);
  c.steps = false;
  EXPECT_EQ(PolylineVertices(RenderSvg(c)), 4);
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 1);
  EXPECT_NE(svg.find(">90% of best</text>"), std::string::npos);
  EXPECT_NE(svg.find(">trial</text>"), std::string::npos);
  EXPECT_NE(svg.find(">GFLOP/s</text>"), std::string::npos);
  EXPECT_NE(svg.find("rotate(-90"), std::string::npos);  // the y title runs along the axis
  // x ticks 0..20 by 5; y ticks 0..50 by 10 (50 is the top point).
  for (const char* label : {">0</text>", ">5</text>", ">15</text>", ">20</text>", ">10</text>", ">50</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(SvgLineChart, WithoutPointsSaysSoAndDrawsNoLine) {
  LineChart c;
  c.title = "empty";
  c.empty_text = "no valid records";
  const std::string svg = RenderSvg(c);
  EXPECT_EQ(TagBalanceError(svg), "");
  EXPECT_EQ(PolylineVertices(svg), 0);
  EXPECT_NE(svg.find(">no valid records</text>"), std::string::npos);
}

TEST(SvgLineChart, PointsStayInsideTheDrawing) {
  LineChart c = Sample();
  c.points = {{0, 0}, {1e6, 7.5e4}};
  c.markers.clear();
  c.reference_y.reset();
  const std::string svg = RenderSvg(c);
  std::smatch m;
  const std::string pts = [&] {
    std::regex_search(svg, m, std::regex("points=\"([^\"]*)\""));
    return std::string(m[1]);
  }();
  const std::regex pair("(-?[0-9.]+),(-?[0-9.]+)");
  for (std::sregex_iterator it(pts.begin(), pts.end(), pair), end; it != end; ++it) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    EXPECT_GE(x, 0);
    EXPECT_LE(x, c.width);
    EXPECT_GE(y, 0);
    EXPECT_LE(y, c.height);
  }
}

}  // namespace
}  // namespace autotune::cli::report
