// SPDX-License-Identifier: MIT
#include "peer.hpp"

namespace nonlin::peers {

std::vector<peer> const& all() {
  static std::vector<peer> const peers = [] {
    std::vector<peer> p;
    p.push_back(make_fastmath());
#if NONLIN_HAVE_EIGEN
    p.push_back(make_eigen());
#endif
#if NONLIN_HAVE_SLEEF
    p.push_back(make_sleef());
#endif
    p.push_back(make_xsimd());
#if NONLIN_HAVE_DNNL
    p.push_back(make_onednn());
#endif
    return p;
  }();
  return peers;
}

}  // namespace nonlin::peers
