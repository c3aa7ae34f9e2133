#include "serve/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

namespace hwplan::serve {
namespace {

struct State {
  long long target = 0;     // tokens to compute before sampling (prompt, or prompt + output so far after preemption)
  long long computed = 0;   // tokens whose KV is in the cache
  long long generated = 0;  // output tokens produced
  long long blocks = 0;
  long long retained = 0;   // after a preemption: its full blocks still in the prefix cache (not yet evicted)
  int generation = 0;       // which of its freed-block runs in the cache's free list is current
  bool started = false;
};

// The free blocks of a paged cache with prefix caching, in the order they will be reused: least recently freed
// first (vLLM's free block queue). A run of blocks given back by a preempted sequence stays useful to it until
// evicted; a sequence's last blocks are evicted before its first, so what remains is a prefix.
struct FreeRun {
  size_t owner;      // kNoOwner: blocks nobody will look up (never used, a finished sequence's, a partial block)
  long long count;   // kNoOwner runs only; an owner's count is its State::retained
  int generation;
};
constexpr size_t kNoOwner = static_cast<size_t>(-1);

long long blocks_for(long long tokens, long long block) { return tokens <= 0 ? 0 : (tokens + block - 1) / block; }

Percentiles summarise(std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  double s = 0;
  for (double x : v) s += x;
  p.mean = s / static_cast<double>(v.size());
  p.p50 = percentile(v, 0.50);
  p.p95 = percentile(v, 0.95);
  p.p99 = percentile(v, 0.99);
  return p;
}

void statistics(SimResult& r, double warmup_fraction, long long closed_loop_clients) {
  const size_t n = r.records.size();
  size_t first = std::min(n, static_cast<size_t>(std::floor(warmup_fraction * static_cast<double>(n))));
  // A closed loop's latencies in its steady state (a warm-up asked for): neither its first round (every client's
  // prompt at once, queued behind each other) nor its last (each client's final request, finishing as the others
  // stop sending: a falling load), each where the run is long enough to keep a round of requests beside it.
  // Records are in send order.
  size_t stop = n;
  if (warmup_fraction > 0 && closed_loop_clients > 0 && n > 0) {
    size_t round = 0;
    while (round < n && r.records[round].arrival <= r.records[0].arrival) ++round;
    const size_t clients = static_cast<size_t>(closed_loop_clients);
    if (n >= round + clients && round > first) {  // a whole round remains after the first
      first = round;
      r.first_round_left_out = true;
    }
    if (n >= first + 2 * clients) {
      stop = n - clients;
      r.last_round_left_out = true;
    }
  }
  std::vector<double> ttft, tpot, e2e;
  double start = INFINITY, last_arrival = 0, end = 0;
  for (size_t i = first; i < n; ++i) {
    const RequestRecord& q = r.records[i];
    start = std::min(start, q.arrival);
    last_arrival = std::max(last_arrival, q.arrival);
    end = std::max(end, q.finish);
    if (i >= stop) continue;
    ttft.push_back(q.first_token - q.arrival);
    e2e.push_back(q.finish - q.arrival);
    if (q.output_tokens > 1) tpot.push_back((q.finish - q.first_token) / static_cast<double>(q.output_tokens - 1));
  }
  r.measured = static_cast<long long>(stop - first);
  r.ttft = summarise(ttft);
  r.tpot_defined = !tpot.empty();
  r.tpot = summarise(tpot);
  r.e2e = summarise(e2e);
  if (r.measured <= 0) return;
  // Throughput is the work the server does in a window, whoever's requests it serves. Every request counted (no
  // warm-up): from the first arrival to the last completion, as benchmark clients time a run. With a warm-up left
  // out, the steady state: from when the warm-up requests and a closed loop's first round (every client's prompt
  // at once) have all completed, or the first measured arrival if later, to the last measured
  // arrival, while the load is on (the last completions come after the clients stopped sending, at a lower load).
  // Where that leaves too short a window (a burst: the measured requests arrive at nearly the same moment), from
  // the first measured arrival to the last completion. A request's first token and prompt count when it is
  // sampled, its other tokens spread over its decode.
  if (first > 0) {
    // The warm-up's requests, and every request sent with the very first one (a closed loop's first round, which
    // may hold more requests than the warm-up: its completions come bunched together).
    double warm_end = 0;
    for (size_t i = 0; i < first; ++i) warm_end = std::max(warm_end, r.records[i].finish);
    for (size_t i = 0; i < n && r.records[i].arrival <= r.records[0].arrival; ++i) warm_end = std::max(warm_end, r.records[i].finish);
    const double steady_start = std::max(start, warm_end);
    if (last_arrival - steady_start > 0.25 * (end - start)) {
      start = steady_start;
      end = last_arrival;
    }
  }
  const double span = end - start;
  if (!(span > 0)) return;
  // The window is half-open, (start, end]: a completion on its opening edge (in a closed loop, the one whose client
  // sends the window's first request) belongs to the time before it.
  double completions = 0, out_tokens = 0, all_tokens = 0;
  for (const RequestRecord& q : r.records) {
    if (q.finish > start && q.finish <= end) completions += 1;
    double produced = 0;
    if (q.first_token > start && q.first_token <= end) {
      produced += 1;
      all_tokens += static_cast<double>(q.prompt_tokens);
    }
    const double decode = q.finish - q.first_token;
    if (q.output_tokens > 1 && decode > 0) {
      const double overlap = std::max(0.0, std::min(end, q.finish) - std::max(start, q.first_token));
      produced += static_cast<double>(q.output_tokens - 1) * overlap / decode;
    } else if (q.output_tokens > 1 && q.finish > start && q.finish <= end) {
      produced += static_cast<double>(q.output_tokens - 1);
    }
    out_tokens += produced;
    all_tokens += produced;
  }
  r.requests_per_second = completions / span;
  r.output_tokens_per_second = out_tokens / span;
  r.total_tokens_per_second = all_tokens / span;
}

}  // namespace

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = p * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

SimResult simulate(StepModel& model, const SimConfig& cfg, std::vector<Request> reqs) {
  SimResult res;
  const size_t n = reqs.size();
  res.records.resize(n);
  const long long block = std::max(1, cfg.engine.block_tokens);
  const bool unlimited = cfg.kv_capacity_tokens < 0;
  const long long total_blocks = unlimited ? 0 : cfg.kv_capacity_tokens / block;
  for (const Request& q : reqs) {
    long long need = blocks_for(q.prompt_tokens + q.output_tokens - q.cached_tokens, block);
    res.longest_request_tokens = std::max(res.longest_request_tokens, q.prompt_tokens + q.output_tokens);
    if (!unlimited && need > total_blocks) res.unservable = true;
  }
  if (res.unservable || n == 0) return res;

  const bool closed = cfg.closed_loop_clients > 0;
  // A request reaches the scheduler the server's handling time after the client sends it (HTTP, tokenisation,
  // the hand-off to the engine; the first chunk's way back is counted here too): its latencies run from the send.
  const double handling = std::max(0.0, cfg.engine.request_overhead_seconds);
  auto visible = [&](size_t id) { return reqs[id].arrival_seconds + handling; };
  std::vector<State> st(n);
  std::deque<size_t> waiting;
  std::deque<size_t> sent;  // closed loop: sent, not yet at the scheduler (in send order, so in order of arrival)
  std::vector<size_t> running, next_running;
  running.reserve(static_cast<size_t>(cfg.engine.max_sequences));
  size_t next_arrival = 0;  // open loop: next request to arrive; closed loop: next request to send
  if (closed) {
    for (; next_arrival < n && static_cast<long long>(next_arrival) < cfg.closed_loop_clients; ++next_arrival) {
      reqs[next_arrival].arrival_seconds = 0;
      sent.push_back(next_arrival);
    }
  }
  long long free_blocks = total_blocks;  // every block no running sequence holds, the cached ones included
  const bool reserve = cfg.engine.kv_admission == KvAdmission::kReserve;
  const bool retain = cfg.engine.keep_preempted_kv && !reserve;
  const bool estimate = cfg.engine.kv_admission == KvAdmission::kEstimate && !unlimited;
  double ratio = cfg.engine.estimate_ratio_start;  // kEstimate: share of the running outputs still to be written
  // kEstimate counts at most estimate_output_cap tokens of any one request's output (SGLang's
  // CLIP_MAX_NEW_TOKENS_ESTIMATION).
  auto still_to_write = [&](size_t id) {
    return static_cast<double>(std::min<long long>(reqs[id].output_tokens - st[id].generated, cfg.engine.estimate_output_cap));
  };
  bool reset_this_step = false;
  std::deque<FreeRun> free_runs;
  if (retain) free_runs.push_back({kNoOwner, total_blocks, 0});
  // Hands `k` free blocks to a sequence: the least recently freed go first, evicting what they cached.
  auto take = [&](long long k) {
    free_blocks -= k;
    while (retain && k > 0 && !free_runs.empty()) {
      FreeRun& r = free_runs.front();
      if (r.owner != kNoOwner && r.generation != st[r.owner].generation) {  // its owner took these blocks back
        free_runs.pop_front();
        continue;
      }
      long long& left = r.owner == kNoOwner ? r.count : st[r.owner].retained;
      const long long e = std::min(k, left);
      left -= e;
      k -= e;
      if (left == 0) free_runs.pop_front();
    }
  };
  auto give_back = [&](size_t owner, long long k) {
    free_blocks += k;
    if (retain && k > 0) free_runs.push_back({owner, k, owner == kNoOwner ? 0 : st[owner].generation});
  };
  double now = 0;
  size_t finished = 0;
  double batch_time = 0, prefill_time = 0, gpu_time = 0, decode_slots = 0, decode_context = 0;
  long long waiting_steps = 0, kv_blocked = 0, seq_blocked = 0;
  struct Slot {
    size_t id;
    long long tokens;
  };
  std::vector<Slot> scheduled;

  // Prefill tokens scheduled this step: a chunk within the budget; without chunked prefill the whole prompt or
  // nothing. A prompt longer than the budget is the step's only prefill (the running decodes may share the step):
  // such engines cannot split it, and they start only with a budget that holds their longest prompt (vLLM raises
  // max_num_batched_tokens to max_model_len without chunked prefill; TensorRT-LLM needs max_num_tokens at least
  // max_input_len), so it is never left waiting for the running batch to drain.
  bool prefill_in_step = false;
  auto chunk = [&](long long remaining, long long budget) -> long long {
    if (cfg.engine.chunked_prefill) return std::min(remaining, budget);
    if (remaining <= budget || (remaining > cfg.engine.max_batched_tokens && !prefill_in_step)) return remaining;
    return 0;
  };
  auto preempt = [&](size_t id) {
    State& s = st[id];
    // Its blocks go back tail first: a partial last block is not cached; the full ones stay until evicted.
    const long long full = retain ? std::min(s.blocks, (s.computed - reqs[id].cached_tokens) / block) : 0;
    ++s.generation;
    s.retained = 0;
    give_back(kNoOwner, s.blocks - full);
    s.retained = full;
    give_back(id, full);
    s.blocks = 0;
    s.computed = reqs[id].cached_tokens;
    s.target = reqs[id].prompt_tokens + s.generated;  // recompute the prompt and what was generated
    ++res.records[id].preemptions;
    ++res.preemptions;
    waiting.push_front(id);
  };

  // With overlap scheduling the batch of the next step is formed while the current one runs: a request that
  // arrives after the current step began joins the step after next. An idle engine takes it at once.
  const bool overlap = model.rates().overlap_scheduling;
  double admit_until = INFINITY;
  const long long rounds = std::max(1, cfg.engine.scheduler_steps);
  long long decode_run = 0;  // decode-only steps since the last step that prefilled
  while (finished < n) {
    if (!closed)
      while (next_arrival < n && visible(next_arrival) <= now) waiting.push_back(next_arrival++);
    while (!sent.empty() && visible(sent.front()) <= now) {
      waiting.push_back(sent.front());
      sent.pop_front();
    }
    if (running.empty() && waiting.empty()) {
      if (!sent.empty()) {
        now = visible(sent.front());
        continue;
      }
      if (closed || next_arrival >= n) break;  // cannot happen: every request finishes
      now = visible(next_arrival);
      continue;
    }
    // The step's batch. Mixed: decodes and prefill chunks together (chunked-prefill engines, TensorRT-LLM's in-flight
    // batching). Separate (vLLM V0 without chunked prefill, SGLang): a step of prefills whenever one can start or
    // continue, the running decodes waiting for it; a decode step otherwise.
    auto form = [&](bool decodes, bool prefills) {
      // 1. Running sequences, in admission order: one token each when decoding, a chunk when prefilling.
      long long budget = cfg.engine.max_batched_tokens;
      scheduled.clear();
      prefill_in_step = false;
      bool preempted = false;
      for (size_t i = 0; i < running.size() && budget > 0; ++i) {
        size_t id = running[i];
        State& s = st[id];
        if (s.computed < s.target ? !prefills : !decodes) continue;
        long long want = s.computed < s.target ? chunk(s.target - s.computed, budget) : 1;
        if (want == 0) continue;
        if (!unlimited) {
          long long need = std::max(0LL, blocks_for(s.computed + want - reqs[id].cached_tokens, block) - s.blocks);
          // A step of prefills only (SGLang) never preempts: a chunk that does not fit waits, the decodes run.
          if (need > free_blocks && !decodes) continue;
          while (need > free_blocks && running.size() > i + 1) {  // evict the newest sequence
            preempt(running.back());
            running.pop_back();
            preempted = true;
          }
          if (need > free_blocks) {  // this sequence is the newest: it goes back to the queue itself
            preempt(id);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
            preempted = true;
            break;
          }
          take(need);
          s.blocks += need;
        }
        prefill_in_step = prefill_in_step || s.computed < s.target;
        scheduled.push_back({id, want});
        budget -= want;
      }
      // 2. Waiting requests, first come first served, while the budget, the batch cap and the cache allow.
      if (prefills && !waiting.empty()) {
        ++waiting_steps;
        bool kv_stop = preempted, seq_stop = false;
        // kEstimate: the tokens left once the running sequences' estimated outputs are set aside.
        double room = 0;
        if (estimate) {
          room = static_cast<double>(free_blocks * block);
          for (size_t r : running) room -= ratio * still_to_write(r);
        }
        while (!waiting.empty() && budget > 0 && !preempted) {
          if (static_cast<long long>(running.size()) >= cfg.engine.max_sequences) {
            seq_stop = true;
            break;
          }
          size_t id = waiting.front();
          if (overlap && visible(id) > admit_until) break;  // arrived after this step's batch was formed
          State& s = st[id];
          if (!s.started) {
            s.started = true;
            s.computed = reqs[id].cached_tokens;
            s.target = reqs[id].prompt_tokens;
          }
          const long long cached = reqs[id].cached_tokens;
          // A preempted sequence finds what is left of its own blocks in the prefix cache and starts after them (at
          // least the last token is computed again: it samples the next one).
          const long long hit = unlimited ? 0 : s.retained;
          const long long start = std::max(s.computed, cached + std::min(hit * block, s.target - cached - 1));
          long long want = chunk(s.target - start, budget);
          if (want == 0) break;
          if (estimate) {  // its prompt and its whole output must fit in what the estimate leaves (alone, it may start)
            const double whole = static_cast<double>(s.target - start) + still_to_write(id);
            if (whole >= room && !running.empty()) {
              kv_stop = true;
              break;
            }
            room -= whole;
          }
          if (!unlimited) {
            // Reserving: the blocks of the prompt and every output token now; on demand: those of this chunk.
            long long need = (reserve ? blocks_for(reqs[id].prompt_tokens + reqs[id].output_tokens - cached, block)
                                      : blocks_for(start + want - cached, block)) - hit;
            if (hit + need > free_blocks) {
              kv_stop = true;
              break;
            }
            if (hit > 0) {  // its cached blocks leave the free list
              ++s.generation;
              s.retained = 0;
              free_blocks -= hit;
            }
            take(need);
            s.blocks = hit + need;
          }
          s.computed = start;
          waiting.pop_front();
          running.push_back(id);
          prefill_in_step = true;
          scheduled.push_back({id, want});
          budget -= want;
        }
        kv_blocked += kv_stop;
        seq_blocked += seq_stop;
      }
    };
    const long long preempted_before = res.preemptions;
    reset_this_step = false;
    if (estimate && running.empty()) ratio = cfg.engine.estimate_ratio_start;  // an idle engine starts over
    // Multi-step scheduling: within a round of decode steps nothing new is admitted.
    const bool mid_round = rounds > 1 && decode_run % rounds != 0 && !running.empty();
    if (mid_round) form(true, false);
    if (!mid_round || scheduled.empty()) {
      form(!cfg.engine.separate_prefill, true);
      if (cfg.engine.separate_prefill && scheduled.empty()) form(true, false);
      // Defensive: nothing decodes and no chunk fits without preempting; then a prefill may preempt (the newest goes
      // back) rather than the engine stall.
      if (cfg.engine.separate_prefill && scheduled.empty()) form(true, true);
    }
    if (estimate && res.preemptions > preempted_before && !running.empty()) {
      // After a preemption the estimate becomes what the survivors need: what they wrote and a few more steps each,
      // over the outputs they were asked for.
      double written = 0, asked = 0;
      for (size_t r : running) {
        written += static_cast<double>(st[r].generated + cfg.engine.estimate_retract_steps);
        asked += static_cast<double>(reqs[r].output_tokens);
      }
      ratio = std::min(1.0, written / std::max(1.0, asked));
      reset_this_step = true;
    }
    if (scheduled.empty()) {
      // Nothing could run: only possible while waiting for an arrival (the first running sequence always fits).
      if (!closed && next_arrival < n) {
        now = std::max(now, visible(next_arrival));
        continue;
      }
      if (!sent.empty()) {
        now = std::max(now, visible(sent.front()));
        continue;
      }
      res.unservable = true;  // not reachable: the first running sequence always fits
      return res;
    }
    // 3. The step's length, then its effects.
    StepLoad load;
    for (const Slot& sl : scheduled) {
      const State& s = st[sl.id];
      load.tokens += sl.tokens;
      if (s.computed < s.target) {
        load.prefill_tokens += sl.tokens;
        const double before = static_cast<double>(s.computed), chunk_tokens = static_cast<double>(sl.tokens);
        load.prefill_score_tokens += chunk_tokens * (before + chunk_tokens / 2);
        load.prefill_kv_tokens += before + chunk_tokens;
        if (s.computed + sl.tokens >= s.target) ++load.sampling_sequences;
      } else {
        ++load.sampling_sequences;
        load.decode_context_tokens += static_cast<double>(s.computed);
        decode_slots += 1;
        decode_context += static_cast<double>(s.computed);
      }
    }
    StepTime t = model.time(load);
    decode_run = load.prefill_tokens > 0 ? 0 : decode_run + 1;
    if (estimate && load.decode_context_tokens > 0 && !reset_this_step)
      ratio = std::max(cfg.engine.estimate_ratio_floor, ratio - cfg.engine.estimate_ratio_decay);
    const double step_start = now;
    now += t.seconds;
    ++res.steps;
    batch_time += static_cast<double>(scheduled.size()) * t.seconds;
    prefill_time += t.prefill_seconds;
    gpu_time += t.gpu_seconds;
    for (const Slot& sl : scheduled) {
      State& s = st[sl.id];
      const bool prefilling = s.computed < s.target;
      s.computed += sl.tokens;
      if (prefilling && s.computed < s.target) continue;  // more chunks to come
      ++s.generated;
      RequestRecord& rec = res.records[sl.id];
      if (s.generated == 1) rec.first_token = now;
    }
    next_running.clear();
    for (size_t id : running) {
      State& s = st[id];
      if (s.computed >= s.target && s.generated >= reqs[id].output_tokens) {
        RequestRecord& rec = res.records[id];
        rec.finish = now;
        rec.arrival = reqs[id].arrival_seconds;
        rec.prompt_tokens = reqs[id].prompt_tokens;
        rec.output_tokens = reqs[id].output_tokens;
        give_back(kNoOwner, s.blocks);
        s.blocks = 0;
        ++finished;
        if (closed && next_arrival < n) {
          reqs[next_arrival].arrival_seconds = now;
          sent.push_back(next_arrival++);
        }
      } else {
        next_running.push_back(id);
      }
    }
    running.swap(next_running);
    // The next step was formed when this one began; once nothing runs, the engine waits and takes what comes.
    admit_until = running.empty() ? INFINITY : step_start;
  }
  res.seconds = now;
  res.mean_batch = now > 0 ? batch_time / now : 0;
  res.mean_decode_context = decode_slots > 0 ? decode_context / decode_slots : 0;
  res.prefill_time_fraction = gpu_time > 0 ? prefill_time / gpu_time : 0;
  if (waiting_steps > 0) {
    res.kv_blocked_fraction = static_cast<double>(kv_blocked) / static_cast<double>(waiting_steps);
    res.sequences_blocked_fraction = static_cast<double>(seq_blocked) / static_cast<double>(waiting_steps);
  }
  statistics(res, cfg.warmup_fraction, cfg.closed_loop_clients);
  return res;
}

}  // namespace hwplan::serve
