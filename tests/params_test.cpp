// Parameter counts computed from the architecture against published counts (each model file names its source).
#include <doctest/doctest.h>

#include "estimators/params.hpp"
#include "test_util.hpp"

using namespace hwplan;

TEST_CASE("every zoo model's computed parameter count is within 1% of its published count") {
  const auto& models = test::registry().models();
  REQUIRE(models.size() >= 49);
  for (const auto& m : models) {
    ParameterCounts c = count_parameters(m);
    CAPTURE(m.id);
    CAPTURE(m.source);
    CHECK(c.total == ::hwplan::test::approx(m.published_parameters).epsilon(0.01));
    // DeepSeek-V2-Lite publishes "2.4B" active, rounded to 0.1B (+/-2.1%): held to that rounding instead.
    const double active_tolerance = m.id == "deepseek-v2-lite" ? 0.021 : 0.01;
    if (m.moe) CHECK(c.active == ::hwplan::test::approx(m.published_active_parameters).epsilon(active_tolerance));
  }
}

TEST_CASE("exact counts of checkpoints") {
  // Hugging Face checkpoints: gpt2 124,439,808 (GPT2Model); Llama-2-7b 6,738,415,616; Mixtral-8x7B 46,702,792,704
  // total (model card / safetensors index). Tolerance: exact.
  CHECK(count_parameters(test::registry().model("gpt2")).total == 124439808.0);
  CHECK(count_parameters(test::registry().model("llama-2-7b")).total == 6738415616.0);
  CHECK(count_parameters(test::registry().model("mixtral-8x7b")).total == 46702792704.0);
  // Mixtral active parameters: 12.9B per the Mistral announcement (within 1%).
  CHECK(count_parameters(test::registry().model("mixtral-8x7b")).active == ::hwplan::test::approx(12.9e9).epsilon(0.01));
}

TEST_CASE("a bare size picks a standard decoder of about that size") {
  for (double size : {1e9, 7e9, 13e9, 70e9}) {
    std::string label = std::to_string(static_cast<int>(size / 1e9)) + "b";
    Model m = test::registry().model(label);
    CAPTURE(label);
    CHECK(count_parameters(m).total == ::hwplan::test::approx(size).epsilon(0.05));
    CHECK(m.hidden_size % 128 == 0);
    // LLaMA-3-style: 8 KV heads of 128 (GQA), vocab 128,256 (models/README.md, bare sizes).
    CHECK(m.kv_heads == 8);
    CHECK(m.head_dim == 128);
    CHECK(m.vocab_size == 128256);
  }
}

TEST_CASE("LoRA adapters on all linear layers of Llama-2-7B at rank 16") {
  // r (in + out) per matrix: q,k,v,o 4 x 16 x 8192 + MLP 3 x 16 x (4096 + 11008), 32 layers = 39,976,960
  // (the count PEFT prints for this configuration).
  Model m = test::registry().model("llama-2-7b");
  CHECK(lora_parameters(m, 16, "all-linear") == 39976960.0);
  CHECK(lora_parameters(m, 8, "qv") == 4194304.0);  // PEFT's classic example: 4,194,304 trainable params
}
