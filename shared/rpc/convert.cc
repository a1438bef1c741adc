#include "shared/rpc/convert.h"

namespace pvfs::rpc {

Timespec from_wire(proto::Timespec::Reader r) { return Timespec{r.getSec(), r.getNsec()}; }

void to_wire(const Timespec& t, proto::Timespec::Builder b) {
  b.setSec(t.sec);
  b.setNsec(t.nsec);
}

Layout from_wire(proto::Layout::Reader r) {
  Layout l;
  l.stripe_size = r.getStripeSize();
  for (uint32_t id : r.getServers()) l.servers.push_back(ServerId(id));
  return l;
}

void to_wire(const Layout& l, proto::Layout::Builder b) {
  b.setStripeSize(l.stripe_size);
  auto list = b.initServers(static_cast<unsigned>(l.servers.size()));
  for (size_t i = 0; i < l.servers.size(); ++i) list.set(i, l.servers[i].value);
}

LayoutPolicy from_wire(proto::LayoutPolicy::Reader r) {
  LayoutPolicy p;
  p.stripe_size = r.getStripeSize();
  p.stripe_count = r.getStripeCount();
  for (uint32_t id : r.getServers()) p.servers.push_back(ServerId(id));
  return p;
}

void to_wire(const LayoutPolicy& p, proto::LayoutPolicy::Builder b) {
  b.setStripeSize(p.stripe_size);
  b.setStripeCount(p.stripe_count);
  auto list = b.initServers(static_cast<unsigned>(p.servers.size()));
  for (size_t i = 0; i < p.servers.size(); ++i) list.set(i, p.servers[i].value);
}

Caller from_wire(proto::Caller::Reader r) {
  Caller c;
  c.uid = r.getUid();
  c.gid = r.getGid();
  for (uint32_t g : r.getGroups()) c.groups.push_back(g);
  return c;
}

void to_wire(const Caller& c, proto::Caller::Builder b) {
  b.setUid(c.uid);
  b.setGid(c.gid);
  auto list = b.initGroups(static_cast<unsigned>(c.groups.size()));
  for (size_t i = 0; i < c.groups.size(); ++i) list.set(i, c.groups[i]);
}

Attr from_wire(proto::mds::Attr::Reader r) {
  Attr a;
  a.ino = InodeId(r.getIno());
  a.mode = r.getMode();
  a.uid = r.getUid();
  a.gid = r.getGid();
  a.size = r.getSize();
  a.nlink = r.getNlink();
  a.rdev = r.getRdev();
  a.atime = from_wire(r.getAtime());
  a.mtime = from_wire(r.getMtime());
  a.ctime = from_wire(r.getCtime());
  if (r.hasLayout()) a.layout = from_wire(r.getLayout());
  a.no_security_xattrs = r.getNoSecurityXattrs();
  return a;
}

void to_wire(const Attr& a, proto::mds::Attr::Builder b) {
  b.setIno(a.ino.value);
  b.setMode(a.mode);
  b.setUid(a.uid);
  b.setGid(a.gid);
  b.setSize(a.size);
  b.setNlink(a.nlink);
  b.setRdev(a.rdev);
  to_wire(a.atime, b.initAtime());
  to_wire(a.mtime, b.initMtime());
  to_wire(a.ctime, b.initCtime());
  if (!a.layout.servers.empty()) to_wire(a.layout, b.initLayout());
  b.setNoSecurityXattrs(a.no_security_xattrs);
}

ObjectId from_wire(proto::storage::ObjectId::Reader r) {
  return ObjectId{InodeId(r.getIno()), r.getIndex()};
}

void to_wire(ObjectId o, proto::storage::ObjectId::Builder b) {
  b.setIno(o.ino.value);
  b.setIndex(o.index);
}

}  // namespace pvfs::rpc
