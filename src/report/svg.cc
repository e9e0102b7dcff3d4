#include "shardwise/report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace shardwise::report {
namespace {

constexpr double kWidth = 840, kHeight = 380;
constexpr double kLeft = 124, kRight = 210, kTop = 34, kBottom = 56;  // kRight holds the legend
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

double Scale(const Axis& a, double v) {
  if (a.log) {
    const double lo = std::log10(a.min), hi = std::log10(a.max);
    return (std::log10(std::max(v, a.min * 1e-3)) - lo) / (hi - lo);
  }
  return (v - a.min) / (a.max - a.min);
}

// Tick values: decades on a log axis, about five round steps on a linear one.
std::vector<double> Ticks(const Axis& a) {
  std::vector<double> ticks;
  if (a.log) {
    for (double t = std::pow(10, std::floor(std::log10(a.min))); t <= a.max * 1.0001; t *= 10) {
      if (t >= a.min * 0.9999) ticks.push_back(t);
    }
    return ticks;
  }
  const double raw = (a.max - a.min) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  for (double t = std::ceil(a.min / step) * step; t <= a.max + step * 1e-6; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

std::string TickText(double v) {
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

std::string Open(const std::string& name, const std::string& title) {
  return fmt::format(
      "<figure><svg class=\"plot\" data-plot=\"{0}\" role=\"img\" aria-label=\"{1}\" "
      "viewBox=\"0 0 {2} {3}\" width=\"{2}\" height=\"{3}\" xmlns=\"http://www.w3.org/2000/svg\">"
      "<title>{1}</title><text class=\"plot-title\" x=\"{4}\" y=\"20\">{1}</text>",
      Escape(name), Escape(title), kWidth, kHeight, kLeft);
}

std::string Close() { return "</svg></figure>\n"; }

// Both axes with ticks, grid and labels; x_ticks empty: no x ticks (categorical rows).
std::string Axes(const Axis& x, const Axis& y, bool x_ticks, bool y_ticks,
                 const std::vector<std::string>& y_rows = {}) {
  std::string out =
      fmt::format("<g class=\"axis x\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", kLeft,
                  kTop + kPlotH, kLeft + kPlotW, kTop + kPlotH);
  if (x_ticks) {
    for (double t : Ticks(x)) {
      const double px = kLeft + Scale(x, t) * kPlotW;
      out += fmt::format(
          "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
          "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
          px, kTop, kTop + kPlotH, kTop + kPlotH + 16, TickText(t));
    }
  }
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
      kLeft + kPlotW / 2, kHeight - 14, Escape(x.label));
  out += fmt::format("<g class=\"axis y\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>",
                     kLeft, kTop, kTop + kPlotH);
  if (y_ticks) {
    for (double t : Ticks(y)) {
      const double py = kTop + kPlotH - Scale(y, t) * kPlotH;
      out += fmt::format(
          "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
          "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
          kLeft, py, kLeft + kPlotW, kLeft - 6, py + 4, TickText(t));
    }
  }
  const double row_h = y_rows.empty() ? 0 : kPlotH / static_cast<double>(y_rows.size());
  for (size_t i = 0; i < y_rows.size(); ++i) {
    out += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
                       kLeft - 6, kTop + (static_cast<double>(i) + 0.5) * row_h + 4,
                       Escape(y_rows[i]));
  }
  out += fmt::format(
      "<text class=\"axis-label\" transform=\"translate(16 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text></g>",
      kTop + kPlotH / 2, Escape(y.label));
  return out;
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = "<g class=\"legend\">";
  for (size_t i = 0; i < entries.size(); ++i) {
    const double y = kTop + 8 + 18 * static_cast<double>(i);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>",
        kLeft + kPlotW + 14, y - 10, entries[i].second, kLeft + kPlotW + 30, y,
        Escape(entries[i].first));
  }
  return out + "</g>";
}

}  // namespace

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Axis FitAxis(std::string label, const std::vector<double>& values, bool log, bool from_zero) {
  Axis a;
  a.label = std::move(label);
  a.log = log;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) lo = hi = log ? 1 : 0;
  if (log) {
    a.min = std::pow(10, std::floor(std::log10(lo)));
    a.max = std::pow(10, std::ceil(std::log10(hi)));
    if (a.max <= a.min) a.max = a.min * 10;
    return a;
  }
  if (from_zero) lo = std::min(lo, 0.0);
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::abs(lo));
  const double pad = (hi - lo) * 0.06;
  a.min = from_zero && lo >= 0 ? lo : lo - pad;
  a.max = hi + pad;
  return a;
}

XyPlot::XyPlot(std::string name, std::string title, Axis x, Axis y)
    : name_(std::move(name)), title_(std::move(title)), x_(std::move(x)), y_(std::move(y)) {}

double XyPlot::X(double v) const { return kLeft + std::clamp(Scale(x_, v), 0.0, 1.0) * kPlotW; }
double XyPlot::Y(double v) const {
  return kTop + kPlotH - std::clamp(Scale(y_, v), 0.0, 1.0) * kPlotH;
}

void XyPlot::AddPoints(const std::string& series,
                       const std::vector<std::pair<double, double>>& points,
                       const std::string& color, const std::vector<std::string>& labels) {
  std::string g = fmt::format("<g class=\"series\" data-series=\"{}\">", Escape(series));
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string tip = i < labels.size() ? labels[i] : series;
    g += fmt::format(
        "<circle class=\"mark\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}</title>"
        "</circle>",
        X(points[i].first), Y(points[i].second), color, Escape(tip));
  }
  body_.push_back(g + "</g>");
  legend_.emplace_back(series, color);
}

void XyPlot::AddLine(const std::string& series,
                     const std::vector<std::pair<double, double>>& points, const std::string& color,
                     bool dashed) {
  std::string pts;
  for (const auto& [x, y] : points) pts += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
  body_.push_back(fmt::format(
      "<polyline class=\"curve\" data-series=\"{}\" data-points=\"{}\" points=\"{}\" fill=\"none\" "
      "stroke=\"{}\" stroke-width=\"2\"{}/>",
      Escape(series), points.size(), pts, color, dashed ? " stroke-dasharray=\"6 4\"" : ""));
  legend_.emplace_back(series, color);
}

void XyPlot::AddHighlight(double x, double y, const std::string& label) {
  // The label sits above and right of the ring, below it near the top edge and left of it near
  // the right edge, so it stays inside the plot and off the rules' labels (at the bottom).
  const double px = X(x), py = Y(y);
  const bool right_edge = px > kLeft + 0.7 * kPlotW;
  const double ty = py - 12 < kTop + 12 ? py + 22 : py - 12;
  body_.push_back(fmt::format(
      "<g class=\"chosen\"><circle cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"8\" fill=\"none\" "
      "stroke=\"#d62728\" stroke-width=\"3\"/><text x=\"{2:.1f}\" y=\"{3:.1f}\" "
      "text-anchor=\"{4}\">{5}</text></g>",
      px, py, right_edge ? px - 12 : px + 12, ty, right_edge ? "end" : "start", Escape(label)));
}

void XyPlot::AddHorizontalRule(double y, const std::string& label) {
  body_.push_back(fmt::format(
      "<g class=\"rule\"><line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" "
      "stroke=\"#555\" stroke-dasharray=\"3 3\"/><text x=\"{3}\" y=\"{4:.1f}\">{5}</text></g>",
      kLeft, Y(y), kLeft + kPlotW, kLeft + 4, Y(y) - 4, Escape(label)));
}

void XyPlot::AddVerticalRule(double x, const std::string& label) {
  // The label runs along the bottom of the line, on its left near the right edge.
  const double px = X(x);
  const bool right_edge = px > kLeft + 0.7 * kPlotW;
  body_.push_back(
      fmt::format("<g class=\"rule\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
                  "stroke=\"#555\" stroke-dasharray=\"3 3\"/><text x=\"{3:.1f}\" y=\"{4}\" "
                  "text-anchor=\"{5}\">{6}</text></g>",
                  px, kTop, kTop + kPlotH, right_edge ? px - 4 : px + 4, kTop + kPlotH - 6,
                  right_edge ? "end" : "start", Escape(label)));
}

std::string XyPlot::Render() const {
  std::string out = Open(name_, title_) + Axes(x_, y_, true, true);
  for (const std::string& b : body_) out += b;
  return out + Legend(legend_) + Close();
}

StackedBars::StackedBars(std::string name, std::string title, std::string value_label,
                         std::string category_label, std::vector<std::string> components,
                         std::vector<std::string> colors)
    : name_(std::move(name)),
      title_(std::move(title)),
      value_label_(std::move(value_label)),
      category_label_(std::move(category_label)),
      components_(std::move(components)),
      colors_(std::move(colors)) {}

void StackedBars::AddBar(const std::string& category, const std::vector<double>& values) {
  bars_.emplace_back(category, values);
}

std::string StackedBars::Render() const {
  std::vector<double> totals;
  std::vector<std::string> rows;
  for (const auto& [name, values] : bars_) {
    double t = 0;
    for (double v : values) t += std::max(0.0, v);
    totals.push_back(t);
    rows.push_back(name);
  }
  const Axis x = FitAxis(value_label_, totals, false, true);
  std::string out =
      Open(name_, title_) + Axes(x, Axis{category_label_, 0, 1, false}, true, false, rows);
  const double row_h = bars_.empty() ? 0 : kPlotH / static_cast<double>(bars_.size());
  for (size_t i = 0; i < bars_.size(); ++i) {
    std::string g = fmt::format("<g class=\"mark\" data-total=\"{:g}\">", totals[i]);
    double at = 0;
    for (size_t c = 0; c < components_.size() && c < bars_[i].second.size(); ++c) {
      const double v = std::max(0.0, bars_[i].second[c]);
      if (v <= 0) continue;
      const double x0 = kLeft + Scale(x, at) * kPlotW, x1 = kLeft + Scale(x, at + v) * kPlotW;
      g += fmt::format(
          "<rect class=\"segment\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{}: {} {:.4g}</title></rect>",
          x0, kTop + static_cast<double>(i) * row_h + 3, std::max(0.5, x1 - x0), row_h - 6,
          colors_[c % colors_.size()], Escape(bars_[i].first), Escape(components_[c]), v);
      at += v;
    }
    out += g + "</g>";
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t c = 0; c < components_.size(); ++c) {
    legend.emplace_back(components_[c], colors_[c % colors_.size()]);
  }
  return out + Legend(legend) + Close();
}

BoxChart::BoxChart(std::string name, std::string title, Axis x, std::string y_label,
                   std::vector<std::string> rows)
    : name_(std::move(name)),
      title_(std::move(title)),
      y_label_(std::move(y_label)),
      x_(std::move(x)),
      rows_(std::move(rows)) {}

double BoxChart::X(double v) const { return kLeft + std::clamp(Scale(x_, v), 0.0, 1.0) * kPlotW; }

void BoxChart::AddBox(size_t row, double x0, double x1, const std::string& color,
                      const std::string& text, const std::string& tooltip) {
  const double row_h = kPlotH / static_cast<double>(std::max<size_t>(1, rows_.size()));
  const double y = kTop + static_cast<double>(row) * row_h;
  const double w = std::max(0.5, X(x1) - X(x0));
  std::string box = fmt::format(
      "<g class=\"mark\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"{}\" stroke=\"#fff\"><title>{}</title></rect>",
      X(x0), y + 2, w, std::max(1.0, row_h - 4), color, Escape(tooltip));
  if (!text.empty() && w > 14 && row_h > 12) {
    box += fmt::format(
        "<text class=\"box-text\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
        X(x0) + w / 2, y + row_h / 2 + 4, Escape(text));
  }
  boxes_.push_back(box + "</g>");
}

void BoxChart::AddGroup(double x0, double x1, const std::string& caption) {
  groups_.push_back(fmt::format(
      "<g class=\"group\"><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#333\"/><text x=\"{:.1f}\" y=\"{}\">{}</text></g>",
      X(x0), kTop - 2, X(x1) - X(x0), kPlotH + 4, X(x0) + 2, kTop + kPlotH + 30, Escape(caption)));
}

std::string BoxChart::Render() const {
  std::string out = Open(name_, title_) + Axes(x_, Axis{y_label_, 0, 1, false}, true, false, rows_);
  for (const std::string& g : groups_) out += g;
  for (const std::string& b : boxes_) out += b;
  return out + Close();
}

}  // namespace shardwise::report
