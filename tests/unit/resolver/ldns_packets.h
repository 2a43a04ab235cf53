// DNS messages made with ldns for the resolver's tests: what a command's resolver library or
// the host's resolver would send.
#pragma once

#include <gtest/gtest.h>
#include <ldns/ldns.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace cordon::resolver::test {

// `p`'s bytes; `p` is freed.
inline std::vector<std::uint8_t> TakeWire(ldns_pkt* p) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  EXPECT_EQ(ldns_pkt2wire(&data, p, &size), LDNS_STATUS_OK);
  std::vector<std::uint8_t> out(data, data + size);
  std::free(data);
  ldns_pkt_free(p);
  return out;
}

// A query for `name` (absolute, "pkg.test.") of `type`, recursion desired, with id `id`.
inline ldns_pkt* QueryPacket(const char* name, ldns_rr_type type, std::uint16_t id) {
  ldns_rdf* owner = nullptr;
  EXPECT_EQ(ldns_str2rdf_dname(&owner, name), LDNS_STATUS_OK);
  ldns_pkt* p = ldns_pkt_query_new(owner, type, LDNS_RR_CLASS_IN, LDNS_RD);
  ldns_pkt_set_id(p, id);
  return p;
}

}  // namespace cordon::resolver::test
