#include "serve/traffic.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

#include "core/error.hpp"

namespace hwplan::serve {
namespace {

constexpr long long kMaxTokens = 100'000'000;

// mt19937_64 is specified bit for bit by the standard; the conversions below are ours.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double uniform() { return (static_cast<double>(g_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }  // (0, 1)
  double normal() {  // Box-Muller
    double u = uniform(), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  double exponential() { return -std::log(uniform()); }  // mean 1
  // Marsaglia and Tsang (2000), mean shape: shape > 0, scale 1.
  double gamma(double shape) {
    if (shape < 1) return gamma(shape + 1) * std::pow(uniform(), 1 / shape);
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x = normal(), v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
  std::uint64_t below(std::uint64_t n) { return g_() % n; }

 private:
  std::mt19937_64 g_;
};

long long draw(const LengthDist& d, Rng& rng) {
  double v = 0;
  switch (d.kind) {
    case LengthKind::kFixed: return d.fixed;
    case LengthKind::kUniform: return d.min + static_cast<long long>(rng.below(static_cast<std::uint64_t>(d.max - d.min + 1)));
    case LengthKind::kLognormal: {
      const double mu = std::log(d.mean) - d.sigma * d.sigma / 2;  // so that the mean of the lengths is d.mean
      v = std::exp(mu + d.sigma * rng.normal());
      break;
    }
    case LengthKind::kEmpirical: return d.values[rng.below(d.values.size())];
  }
  return std::clamp(static_cast<long long>(std::llround(v)), 1LL, kMaxTokens);
}

double number(const std::string& flag, const std::string& text, const std::string& spec) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
    throw InputError({}, flag, "'" + spec + "': '" + text + "' is not a number");
  return v;
}

}  // namespace

double LengthDist::average() const {
  switch (kind) {
    case LengthKind::kFixed: return static_cast<double>(fixed);
    case LengthKind::kUniform: return (static_cast<double>(min) + static_cast<double>(max)) / 2;
    case LengthKind::kLognormal: {
      // The lengths drawn are whole tokens, at least one (draw rounds and clamps them): the mean of those, not X's
      // own, which a small mean (lognormal:3:1.5, lognormal:1:4) would misstate. Exactly over the first lengths
      // (each k drawn from [k - 0.5, k + 0.5), every draw below 1.5 as one token), the tail past them as X's own.
      if (sigma <= 0) return std::max(static_cast<double>(std::llround(mean)), 1.0);
      const double mu = std::log(mean) - sigma * sigma / 2;
      auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
      auto cdf = [&](double x) { return phi((std::log(x) - mu) / sigma); };
      constexpr int kExact = 4096;
      double sum = cdf(1.5), below = cdf(1.5);
      for (int k = 2; k <= kExact; ++k) {
        const double upto = cdf(k + 0.5);
        sum += k * (upto - below);
        below = upto;
      }
      // E[X; X >= kExact + 0.5] = mean * P(Z >= z - sigma).
      return sum + mean * (1 - phi((std::log(kExact + 0.5) - mu) / sigma - sigma));
    }
    case LengthKind::kEmpirical: {
      double s = 0;
      for (long long v : values) s += static_cast<double>(v);
      return values.empty() ? 0 : s / static_cast<double>(values.size());
    }
  }
  return 0;
}

double LengthDist::longest() const {
  switch (kind) {
    case LengthKind::kFixed: return static_cast<double>(fixed);
    case LengthKind::kUniform: return static_cast<double>(max);
    case LengthKind::kLognormal: return mean * std::exp(2.326 * sigma - sigma * sigma / 2);  // the 99th percentile
    case LengthKind::kEmpirical: return values.empty() ? 0.0 : static_cast<double>(*std::max_element(values.begin(), values.end()));
  }
  return 0;
}

double Traffic::trace_rate() const {
  if (trace.size() < 2 || !trace.front().has_arrival) return 0;
  double span = trace.back().arrival_seconds - trace.front().arrival_seconds;
  return span > 0 ? static_cast<double>(trace.size() - 1) / span : 0;
}

LengthDist parse_length_dist(const std::string& flag, const std::string& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= spec.size(); ++i)
    if (i == spec.size() || spec[i] == ':') {
      parts.push_back(spec.substr(start, i - start));
      start = i + 1;
    }
  LengthDist d;
  if (parts.size() == 3 && parts[0] == "uniform") {
    double lo = number(flag, parts[1], spec), hi = number(flag, parts[2], spec);
    if (lo < 1 || hi < lo || hi > kMaxTokens || lo != std::floor(lo) || hi != std::floor(hi))
      throw InputError({}, flag, "'" + spec + "': expected whole numbers 1 <= MIN <= MAX <= 1e8");
    d.kind = LengthKind::kUniform;
    d.min = static_cast<long long>(lo);
    d.max = static_cast<long long>(hi);
    return d;
  }
  if (parts.size() == 3 && parts[0] == "lognormal") {
    d.mean = number(flag, parts[1], spec);
    d.sigma = number(flag, parts[2], spec);
    if (d.mean < 1 || d.mean > kMaxTokens || d.sigma < 0 || d.sigma > 4)
      throw InputError({}, flag, "'" + spec + "': expected 1 <= MEAN <= 1e8 tokens and 0 <= SIGMA <= 4");
    d.kind = LengthKind::kLognormal;
    return d;
  }
  throw InputError({}, flag, "'" + spec + "' is not one of: uniform:MIN:MAX, lognormal:MEAN:SIGMA, file:PATH");
}

std::vector<Request> make_requests(const Traffic& t, double rate) {
  Rng rng(t.seed);
  const long long n = t.requests;
  std::vector<Request> out(static_cast<size_t>(n));
  const bool trace = t.arrival == ArrivalKind::kTrace;
  const double trace_rate = t.trace_rate();
  double clock = 0;
  for (long long i = 0; i < n; ++i) {
    Request& r = out[static_cast<size_t>(i)];
    if (trace) {
      // A trace shorter than --requests repeats, its arrivals continuing after its end.
      const TraceRow& row = t.trace[static_cast<size_t>(i) % t.trace.size()];
      r.prompt_tokens = row.prompt_tokens;
      r.output_tokens = row.output_tokens;
      if (trace_rate > 0) {
        long long lap = i / static_cast<long long>(t.trace.size());
        double span = t.trace.back().arrival_seconds - t.trace.front().arrival_seconds + 1 / trace_rate;
        r.arrival_seconds = (row.arrival_seconds - t.trace.front().arrival_seconds + static_cast<double>(lap) * span) *
                            trace_rate / rate;
      } else {
        clock += rng.exponential() / rate;
        r.arrival_seconds = clock;
      }
    } else {
      if (t.arrival == ArrivalKind::kPoisson) clock += rng.exponential() / rate;
      else if (t.arrival == ArrivalKind::kGamma) {
        const double shape = 1 / (t.burstiness_cv * t.burstiness_cv);
        clock += rng.gamma(shape) / shape / rate;
      }
      r.arrival_seconds = t.arrival == ArrivalKind::kClosedLoop ? 0 : clock;
      r.prompt_tokens = draw(t.prompt, rng);
      r.output_tokens = std::max(1LL, draw(t.output, rng));
    }
    r.cached_tokens = static_cast<long long>(std::floor(t.prefix_cache_hit * static_cast<double>(r.prompt_tokens)));
    // At least one prompt token is computed: it produces the first output token.
    r.cached_tokens = std::min(r.cached_tokens, r.prompt_tokens - 1);
  }
  if (trace && trace_rate > 0)
    std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.arrival_seconds < b.arrival_seconds; });
  return out;
}

}  // namespace hwplan::serve
