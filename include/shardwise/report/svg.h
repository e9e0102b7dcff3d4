// A small SVG writer for the HTML report: x-y plots (linear or log axes, points, lines,
// reference lines), horizontal stacked bars, and free-form boxes (timelines, cluster maps).
// Every plot is one <svg data-plot="NAME"> with <g class="axis x">, <g class="axis y">, a
// <text class="axis-label"> per axis, and one element of class "mark" per data point, bar,
// box or GPU, so tests (and readers of the DOM) can check what was drawn. No JavaScript.
// Value types; not thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace shardwise::report {

// Escapes &, <, >, " and ' for HTML text and attributes.
std::string Escape(const std::string& text);

struct Axis {
  std::string label;
  double min = 0;
  double max = 1;
  bool log = false;  // log10 scale; min and max must be > 0
};

// Smallest and largest of `values` widened into a readable axis range (log: whole decades).
Axis FitAxis(std::string label, const std::vector<double>& values, bool log, bool from_zero);

class XyPlot {
 public:
  XyPlot(std::string name, std::string title, Axis x, Axis y);
  // Points drawn as circles (one "mark" each), titled with `labels` when given.
  void AddPoints(const std::string& series, const std::vector<std::pair<double, double>>& points,
                 const std::string& color, const std::vector<std::string>& labels = {});
  // A polyline through `points` (no marks: a curve, not data points).
  void AddLine(const std::string& series, const std::vector<std::pair<double, double>>& points,
               const std::string& color, bool dashed = false);
  // One emphasised point ("chosen"), drawn larger with its label.
  void AddHighlight(double x, double y, const std::string& label);
  void AddHorizontalRule(double y, const std::string& label);
  void AddVerticalRule(double x, const std::string& label);
  std::string Render() const;

 private:
  double X(double v) const;
  double Y(double v) const;
  std::string name_, title_;
  Axis x_, y_;
  std::vector<std::string> body_;                            // SVG elements in plot coordinates
  std::vector<std::pair<std::string, std::string>> legend_;  // series, color
};

// Horizontal stacked bars: one row per category, one segment per component.
class StackedBars {
 public:
  // `category_label` names the rows ("layout, phase"), `value_label` the bars' length.
  StackedBars(std::string name, std::string title, std::string value_label,
              std::string category_label, std::vector<std::string> components,
              std::vector<std::string> colors);
  void AddBar(const std::string& category, const std::vector<double>& values);
  std::string Render() const;

 private:
  std::string name_, title_, value_label_, category_label_;
  std::vector<std::string> components_, colors_;
  std::vector<std::pair<std::string, std::vector<double>>> bars_;
};

// Boxes on a grid of rows: a timeline (x is time) or a map (x is a slot). Each box is a mark.
class BoxChart {
 public:
  BoxChart(std::string name, std::string title, Axis x, std::string y_label,
           std::vector<std::string> rows);
  void AddBox(size_t row, double x0, double x1, const std::string& color, const std::string& text,
              const std::string& tooltip);
  // Separator drawn between groups of slots (e.g. node boundaries), with a caption.
  void AddGroup(double x0, double x1, const std::string& caption);
  std::string Render() const;

 private:
  std::string name_, title_, y_label_;
  Axis x_;
  std::vector<std::string> rows_;
  std::vector<std::string> boxes_, groups_;
  double X(double v) const;
};

}  // namespace shardwise::report
