// What the Kokkos benchmark drivers share: the median time of a kernel launch sequence, fenced, warm-up excluded
#pragma once

#include <algorithm>
#include <vector>

#include <Kokkos_Core.hpp>

template <class F> static double TimeUs(int reps, F f)
{
  std::vector<double> t;
  f();
  Kokkos::fence();
  for (int r = 0; r < reps; r++) {
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds() * 1e6);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
