// FastDiv (kernels/cuda/fast_div.hpp), the streamed slab kernels' index split: exact against
// integer division for every divisor in its range, at numerators around each multiple of it and
// at the top of its range, and a divisor outside the range is refused by name. Host only.
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/fast_div.hpp"
#include "physics/error.hpp"

namespace minimod {
namespace {

using kernels::cuda::FastDiv;
using kernels::cuda::fast_div_by;

TEST(FastDiv, EqualsIntegerDivisionOverItsRange) {
  const unsigned top = FastDiv::kMaxNumerator;
  long checked = 0;
  for (int d = 1; d <= FastDiv::kMaxDivisor; ++d) {
    const FastDiv div = fast_div_by(d);
    const unsigned ud = static_cast<unsigned>(d);
    // Around the multiples of d at a few magnitudes (where a rounding error would show first),
    // and the largest numerators.
    for (unsigned base : {0u, 1000u, 65536u, 1u << 20, top - 2 * ud}) {
      const unsigned m0 = base / ud * ud;
      for (unsigned n : {m0, m0 + ud - 1, m0 + ud, m0 + 2 * ud - 1}) {
        if (n > top) continue;
        ASSERT_EQ(div(n), n / ud) << n << " / " << d;
        ++checked;
      }
    }
    for (unsigned n = top; n > top - 3; --n) ASSERT_EQ(div(n), n / ud) << n << " / " << d;
  }
  EXPECT_GT(checked, 1000000);
  const FastDiv d27 = fast_div_by(27);  // a slab's width
  for (unsigned n = 0; n < 100000; ++n) ASSERT_EQ(d27(n), n / 27u) << n;
}

TEST(FastDiv, RefusesADivisorOutsideItsRange) {
  for (int d : {0, -3, FastDiv::kMaxDivisor + 1}) {
    try {
      fast_div_by(d);
      ADD_FAILURE() << "accepted " << d;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(d)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace minimod
