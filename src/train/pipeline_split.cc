#include "shardwise/train/pipeline_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace shardwise::train {
namespace {

// Longest layout a user may write once repetitions are expanded.
constexpr size_t kMaxLayoutSymbols = 1'000'000;

// Expands Megatron's layout grammar: symbols E t m L |, "X*N" repeats the symbol or parenthesised
// group before it, commas and spaces are ignored.
class LayoutExpander {
 public:
  explicit LayoutExpander(std::string_view text) : text_(text) {}

  StatusOr<std::string> Run() {
    SW_ASSIGN_OR_RETURN(std::string out, Sequence());
    if (pos_ != text_.size()) return Fail("unmatched ')'");
    return out;
  }

 private:
  StatusOr<std::string> Sequence() {
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != ')') {
      const char c = text_[pos_];
      if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        continue;
      }
      std::string item;
      if (c == '(') {
        ++pos_;
        SW_ASSIGN_OR_RETURN(item, Sequence());
        if (pos_ >= text_.size()) return Fail("unmatched '('");
        ++pos_;  // ')'
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else {
        return Fail(fmt::format("unexpected '{}'", c));
      }
      SW_ASSIGN_OR_RETURN(const int64_t times, Repeat());
      if (out.size() + item.size() * static_cast<size_t>(times) > kMaxLayoutSymbols) {
        return Fail("expands to more than a million symbols");
      }
      for (int64_t i = 0; i < times; ++i) out += item;
    }
    return out;
  }

  StatusOr<int64_t> Repeat() {
    if (pos_ >= text_.size() || text_[pos_] != '*') return 1;
    ++pos_;
    int64_t n = 0;
    const size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) &&
           n <= static_cast<int64_t>(kMaxLayoutSymbols)) {
      n = n * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start || n < 1) return Fail("'*' must be followed by a positive count");
    return n;
  }

  Status Fail(const std::string& what) const {
    return Error(fmt::format(
        "`pipeline_layout` '{}': {} at character {}; write Megatron's layout, e.g. "
        "\"Et*3|(tt|)*29m|L\" (E embedding, t layer, m MTP module, L loss, | between chunks)",
        text_.substr(0, 80), what, pos_ + 1));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

StatusOr<PipelineSplit> FromLayout(int64_t layers, int64_t mtp, int64_t pp, int64_t vp,
                                   const std::string& text) {
  SW_ASSIGN_OR_RETURN(const std::string symbols, LayoutExpander(text).Run());
  PipelineSplit split{pp, vp, {PipelineChunk{}}};
  int64_t layer = 0, embeddings = 0, losses = 0, mtps = 0;
  bool mtp_after_layers = true;
  for (char c : symbols) {
    PipelineChunk& chunk = split.chunks.back();
    if (c == '|') {
      split.chunks.push_back({layer, 0, false, false, 0});
    } else if (c == 't') {
      ++chunk.layers;
      ++layer;
      mtp_after_layers = mtps == 0;
    } else if (c == 'E') {
      chunk.embedding = true;
      ++embeddings;
    } else if (c == 'L') {
      chunk.loss = true;
      ++losses;
    } else {
      ++chunk.mtp;
      ++mtps;
    }
  }
  const auto chunks = static_cast<int64_t>(split.chunks.size());
  std::string wrong;
  if (chunks != pp * vp) {
    wrong = fmt::format("has {} chunks where pp x vp = {} x {} needs {}", chunks, pp, vp, pp * vp);
  } else if (layer != layers) {
    wrong = fmt::format("places {} layers; the model has {}", layer, layers);
  } else if (embeddings != 1 || !split.chunks.front().embedding) {
    wrong = "must hold one 'E', in the first chunk";
  } else if (losses != 1 || !split.chunks.back().loss) {
    wrong = "must hold one 'L', in the last chunk";
  } else if (mtps != mtp || !mtp_after_layers) {
    wrong = fmt::format(
        "must hold the {} MTP module(s) ('m') after the last layer; it has {}{}", mtp, mtps,
        mtps != mtp ? fmt::format(" (set `mtp_layers` {}, or change the 'm's)", mtps) : "");
  }
  if (!wrong.empty()) {
    return Error(fmt::format("`pipeline_layout` '{}' {}", text.substr(0, 80), wrong));
  }
  return split;
}

// Why the first/last stage counts given do not split the layers, naming only the counts given,
// and the nearest count for the first (or else the last) stage that does, if one exists: every
// stage's layers must also split into its vp model chunks.
std::string FirstLastMisfit(int64_t layers, int64_t pp, int64_t vp, const PipelineSplitRequest& r) {
  const bool first = r.first_stage_layers > 0, last = r.last_stage_layers > 0;
  const int64_t others = pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int64_t rest = layers - r.first_stage_layers - r.last_stage_layers;
  std::string given;
  if (first) given = fmt::format("`first_stage_layers` {}", r.first_stage_layers);
  if (last) {
    given += fmt::format("{}`last_stage_layers` {}", first ? " and " : "", r.last_stage_layers);
  }
  // Vary the first count given (the last if only it was): the others must share what is left.
  const int64_t fixed = first ? r.last_stage_layers : 0;
  const int64_t asked = first ? r.first_stage_layers : r.last_stage_layers;
  const auto splits = [&](int64_t n) {
    const int64_t left = layers - n - fixed;
    if (n % vp != 0 || fixed % vp != 0 || left < 0) return false;
    return others == 0 ? left == 0
                       : left >= others && left % others == 0 && (left / others) % vp == 0;
  };
  int64_t best = 0;
  for (int64_t n = 1; n + fixed <= layers; ++n) {
    if (splits(n) && (best == 0 || std::abs(n - asked) < std::abs(best - asked))) best = n;
  }
  const std::string fix =
      best > 0
          ? fmt::format("; try `{}` {}", first ? "first_stage_layers" : "last_stage_layers", best)
          : "";
  if (others == 0) {
    return fmt::format(
        "{} place {} of the {} layers; with pp {} the two stages must hold them all{}", given,
        layers - rest, layers, pp, fix);
  }
  return fmt::format(
      "{} leave{} {} of the {} layers for the other {} pipeline stage{}, which must share them "
      "evenly (at least one each){}",
      given, first && last ? "" : "s", rest, layers, others, others == 1 ? "" : "s", fix);
}

// Rank r's layers under --decoder-first/last-pipeline-num-layers, each rank's spread evenly over
// its vp chunks.
StatusOr<PipelineSplit> FromFirstLast(int64_t layers, int64_t mtp, int64_t pp, int64_t vp,
                                      const PipelineSplitRequest& r) {
  if (pp < 2) {
    return Error(
        "`first_stage_layers` and `last_stage_layers` need pipeline parallelism (pp >= 2)");
  }
  const int64_t given = r.first_stage_layers + r.last_stage_layers;
  const int64_t others =
      pp - (r.first_stage_layers > 0 ? 1 : 0) - (r.last_stage_layers > 0 ? 1 : 0);
  const int64_t rest = layers - given;
  if (rest < 0 || (others == 0 && rest != 0) || (others > 0 && (rest < others || rest % others))) {
    return Error(FirstLastMisfit(layers, pp, vp, r));
  }
  std::vector<int64_t> per_rank(pp, others > 0 ? rest / others : 0);
  if (r.first_stage_layers > 0) per_rank.front() = r.first_stage_layers;
  if (r.last_stage_layers > 0) per_rank.back() = r.last_stage_layers;
  for (int64_t n : per_rank) {
    if (n % vp != 0) {
      return Error(fmt::format(
          "a pipeline stage of {} layers does not split into {} model chunks (interleaved:{}); "
          "choose stage layer counts divisible by {}",
          n, vp, vp, vp));
    }
  }
  PipelineSplit split{pp, vp, {}};
  int64_t layer = 0;
  for (int64_t v = 0; v < vp; ++v) {
    for (int64_t rank = 0; rank < pp; ++rank) {
      const int64_t n = per_rank[rank] / vp;
      split.chunks.push_back({layer, n, false, false, 0});
      layer += n;
    }
  }
  split.chunks.front().embedding = true;
  split.chunks.back().loss = true;
  split.chunks.back().mtp = mtp;
  return split;
}

Status TooManyChunks(int64_t layers, int64_t pp, int64_t vp) {
  return Error(
      fmt::format("pp x vp = {} x {} = {} model chunks is more than {} layers can fill (the "
                  "embedding and the loss count as one each); use fewer pipeline stages or virtual "
                  "stages",
                  pp, vp, pp * vp, layers));
}

// Even when the layers divide; else embedding, loss and MTP modules counted as layers and the
// slots spread as evenly as they go: every chunk filled to the lowest level that holds the
// layers, the excess taken back one layer a chunk from the last (a middle chunk keeps one).
StatusOr<PipelineSplit> Automatic(int64_t layers, int64_t mtp, int64_t pp, int64_t vp) {
  const int64_t n = pp * vp;
  PipelineSplit split{pp, vp, {}};
  if (layers % n == 0 && mtp == 0) {
    for (int64_t i = 0; i < n; ++i) split.chunks.push_back({i * (layers / n), layers / n});
  } else {
    // Slots each chunk spends on other modules: the embedding, the loss and MTP modules.
    std::vector<int64_t> fixed(static_cast<size_t>(n), 0);
    fixed.front() += 1;
    fixed.back() += 1 + mtp;
    const int64_t slots = layers + mtp + 2;
    // Every chunk filled to ceil(slots / n) holds at least n x that - (2 + mtp) >= layers.
    const int64_t level = (slots + n - 1) / n;
    std::vector<int64_t> take(static_cast<size_t>(n), 0);
    int64_t held = 0;
    for (size_t i = 0; i < take.size(); ++i) {
      take[i] = std::max<int64_t>(0, level - fixed[i]);
      held += take[i];
    }
    // Passes from the last chunk back until the excess is gone or no chunk can give a layer.
    for (bool gave = true; held > layers && gave;) {
      gave = false;
      for (int64_t i = n - 1; i >= 0 && held > layers; --i) {
        const bool middle = i > 0 && i + 1 < n;
        int64_t& t = take[static_cast<size_t>(i)];
        if (t > (middle ? 1 : 0)) {
          --t;
          --held;
          gave = true;
        }
      }
    }
    if (held > layers) return TooManyChunks(layers, pp, vp);
    int64_t layer = 0;
    for (const int64_t t : take) {
      split.chunks.push_back({layer, t});
      layer += t;
    }
  }
  // Every middle chunk holds a layer (the even split at least one each, the spread one kept).
  split.chunks.front().embedding = true;
  split.chunks.back().loss = true;
  split.chunks.back().mtp = mtp;
  return split;
}

}  // namespace

std::vector<PipelineChunk> PipelineSplit::ChunksOf(int64_t rank) const {
  std::vector<PipelineChunk> out;
  for (size_t i = static_cast<size_t>(rank); i < chunks.size(); i += static_cast<size_t>(pp)) {
    out.push_back(chunks[i]);
  }
  return out;
}

std::string PipelineSplit::ToString() const {
  std::string out;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const PipelineChunk& c = chunks[i];
    if (i > 0) out += '|';
    if (c.embedding) out += 'E';
    out += std::string(static_cast<size_t>(c.layers), 't');
    out += std::string(static_cast<size_t>(c.mtp), 'm');
    if (c.loss) out += 'L';
  }
  return out;
}

StatusOr<PipelineSplit> SplitPipeline(int64_t layers, int64_t mtp, int64_t pp, int64_t vp,
                                      const PipelineSplitRequest& request) {
  if (layers < 1 || pp < 1 || vp < 1 || mtp < 0) {
    return Error("a pipeline split needs at least one layer, stage and model chunk");
  }
  switch (request.kind) {
    case PipelineSplitRequest::Kind::kLayout:
      return FromLayout(layers, mtp, pp, vp, request.layout);
    case PipelineSplitRequest::Kind::kFirstLast:
      return FromFirstLast(layers, mtp, pp, vp, request);
    case PipelineSplitRequest::Kind::kAuto:
      break;
  }
  return Automatic(layers, mtp, pp, vp);
}

}  // namespace shardwise::train
