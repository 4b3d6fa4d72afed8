// SPDX-License-Identifier: Apache-2.0
// What submit() accepts, message by message: every rule names the item (and its label),
// and the well-formed shapes (span to span, produce, consume, both) pass.

#include "device_choice.hpp"
#include "item_validation.hpp"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace streampipe::pipeline::detail {
namespace {

Operation same_size(int* calls = nullptr) {
  Operation op;
  op.name = "copy";
  op.output_bytes = [calls](std::size_t n) {
    if (calls) ++*calls;
    return n;
  };
  return op;
}

// An operation that does not say how large its output is.
Operation unsized() {
  Operation op;
  op.name = "unsized";
  return op;
}

// An item of span input `in` and output `out` (none if empty).
Item spans(std::span<const std::byte> in, std::span<std::byte> out = {}, std::string label = {}) {
  return make_item(in, out, std::move(label));
}

// The message validate_item() throws, or "accepted".
std::string verdict(const Item& item, std::size_t index, const Operation& op) {
  try {
    (void)validate_item(item, index, op);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

struct Buffers {
  std::array<std::byte, 4> in{};
  std::array<std::byte, 4> out{};
  std::array<std::byte, 3> short_out{};
};

TEST(ItemValidation, NamesItemsByIndexAndLabel) {
  EXPECT_EQ(item_name(3, ""), "item 3");
  EXPECT_EQ(item_name(0, "cat.png"), "item 0 (cat.png)");
}

TEST(ItemValidation, InputIsASpanOrAProduceStage) {
  Buffers b;
  Item both;
  both.in = b.in;
  both.produce = [](StagingInput&) {};
  both.out = b.out;
  EXPECT_EQ(verdict(both, 0, same_size()), "item 0: give either an input span or a produce stage, not both");

  Item neither;
  neither.out = b.out;
  neither.label = "empty.bin";
  EXPECT_EQ(verdict(neither, 7, same_size()), "item 7 (empty.bin): empty input");
}

TEST(ItemValidation, WorkIsPositiveAndFinite) {
  Buffers b;
  Item item = spans(b.in, b.out, "group");
  item.work = 16;
  EXPECT_EQ(verdict(item, 0, same_size()), "accepted");
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    item.work = bad;
    EXPECT_NE(verdict(item, 2, same_size()).find("item 2 (group): work"), std::string::npos) << bad;
  }
}

TEST(ItemValidation, WorkKindIsInRange) {
  Buffers b;
  Item item = spans(b.in, b.out, "group");
  for (int kind = 0; kind < static_cast<int>(DeviceChoice::kKinds); ++kind) {
    item.work_kind = kind;
    EXPECT_EQ(verdict(item, 0, same_size()), "accepted") << kind;
    EXPECT_EQ(kind_of(item), static_cast<std::size_t>(kind));
  }
  for (const int bad : {-1, static_cast<int>(DeviceChoice::kKinds), 1000}) {
    item.work_kind = bad;
    EXPECT_NE(verdict(item, 2, same_size()).find("item 2 (group): work kind"), std::string::npos) << bad;
    EXPECT_EQ(kind_of(item), 0u) << "an out-of-range kind counts as 0 until validation refuses it";
  }
}

TEST(ItemValidation, OutputIsASpanOrAConsumeStage) {
  Buffers b;
  Item both;
  both.in = b.in;
  both.out = b.out;
  both.consume = [](std::span<const std::byte>) {};
  EXPECT_EQ(verdict(both, 2, same_size()), "item 2: give either an output span or a consume stage, not both");
}

TEST(ItemValidation, ConsumingASpanInputNeedsTheOutputSize) {
  Buffers b;
  Item item = spans(b.in);
  item.consume = [](std::span<const std::byte>) {};
  EXPECT_EQ(verdict(item, 1, unsized()), "item 1: a consume stage on a span input needs Operation::output_bytes");
  EXPECT_EQ(verdict(item, 1, same_size()), "accepted");

  Item produced;  // a produce stage declares its own output size
  produced.produce = [](StagingInput&) {};
  produced.consume = [](std::span<const std::byte>) {};
  EXPECT_EQ(verdict(produced, 1, unsized()), "accepted");
}

TEST(ItemValidation, OutputSpanMustHaveTheOperationsSize) {
  Buffers b;
  EXPECT_EQ(verdict(spans(b.in, {}, "x"), 4, same_size()), "item 4 (x): empty output");
  EXPECT_EQ(verdict(spans(b.in, b.short_out), 5, same_size()),
            "item 5: output is 3 bytes but operation 'copy' produces 4 from 4 input bytes");
  EXPECT_EQ(verdict(spans(b.in, b.out), 6, same_size()), "accepted");
}

TEST(ItemValidation, AnOperationWithoutOutputMayHaveNoOutputSpan) {
  Buffers b;
  Operation sink;
  sink.name = "sink";
  sink.output_bytes = [](std::size_t) { return std::size_t{0}; };
  EXPECT_EQ(verdict(spans(b.in), 0, sink), "accepted");
  EXPECT_EQ(verdict(spans(b.in, b.out), 0, sink),
            "item 0: output is 4 bytes but operation 'sink' produces 0 from 4 input bytes");
}

TEST(ItemValidation, WithoutOutputBytesAnyOutputSpanGoes) {
  Buffers b;
  EXPECT_EQ(verdict(spans(b.in), 0, unsized()), "accepted");
  EXPECT_EQ(verdict(spans(b.in, b.short_out), 0, unsized()), "accepted");
}

TEST(ItemValidation, ProduceItemsAreNotCheckedAgainstTheOutputSize) {
  Buffers b;
  int calls = 0;
  Item item;
  item.produce = [](StagingInput&) {};
  item.out = b.short_out;  // produce() declares its output size; checked when it allocates
  EXPECT_EQ(verdict(item, 0, same_size(&calls)), "accepted");
  EXPECT_EQ(calls, 0);
}

TEST(ItemValidation, AsksForTheOutputSizeOnce) {
  Buffers b;
  int calls = 0;
  EXPECT_NE(verdict(spans(b.in, b.short_out), 0, same_size(&calls)), "accepted");
  EXPECT_EQ(calls, 1);
}

// A consume stage on a span input is sized at submission, so that an operation refusing the
// input size refuses the item there, before the engine counts it (issue 24, class 5: the
// refusal came later, from inside submit(), with the item already pending).
TEST(ItemValidation, ReturnsTheOutputSizeAndSizesConsumeStagesAtSubmission) {
  Buffers b;
  int calls = 0;
  Item consumed = spans(b.in);
  consumed.consume = [](std::span<const std::byte>) {};
  Operation doubled;
  doubled.name = "double";
  doubled.output_bytes = [&calls](std::size_t n) {
    ++calls;
    if (n % 8 != 0) throw std::domain_error("input of " + std::to_string(n) + " bytes is not whole records");
    return 2 * n;
  };
  try {
    (void)validate_item(consumed, 0, doubled);
    FAIL() << "output_bytes refused the size, and validation let the item through";
  } catch (const std::domain_error& e) {
    EXPECT_STREQ(e.what(), "input of 4 bytes is not whole records");
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(validate_item(consumed, 0, same_size()), 4u);

  EXPECT_EQ(validate_item(spans(b.in, b.out), 0, same_size()), 4u);
  EXPECT_EQ(validate_item(spans(b.in, b.short_out), 0, Operation{}), 3u);  // unsized operation: the span's size

  Item produced;
  produced.produce = [](StagingInput&) {};
  produced.consume = [](std::span<const std::byte>) {};
  EXPECT_EQ(validate_item(produced, 0, doubled), 0u);
  EXPECT_EQ(calls, 1);
}

TEST(ItemValidation, DescribesExceptions) {
  EXPECT_EQ(describe_exception(std::make_exception_ptr(std::runtime_error("disk full"))), "disk full");
  EXPECT_EQ(describe_exception(std::make_exception_ptr(42)), "unknown exception");
}

}  // namespace
}  // namespace streampipe::pipeline::detail
