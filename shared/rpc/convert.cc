#include "shared/rpc/convert.h"

#include <algorithm>
#include <cstdint>

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
  a.written_elsewhere = r.getWrittenElsewhere();
  if (r.getBlocks() >= 0) a.blocks = static_cast<uint64_t>(r.getBlocks());
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
  b.setWrittenElsewhere(a.written_elsewhere);
  b.setBlocks(a.blocks ? static_cast<int64_t>(std::min<uint64_t>(*a.blocks, INT64_MAX)) : -1);
}

SetAttr from_wire(proto::mds::Request::Setattr::Reader r) {
  SetAttr s;
  s.mask = r.getMask();
  s.mode = r.getMode();
  s.uid = r.getUid();
  s.gid = r.getGid();
  s.size = r.getSize();
  s.atime = from_wire(r.getAtime());
  s.mtime = from_wire(r.getMtime());
  return s;
}

void to_wire(const SetAttr& s, proto::mds::Request::Setattr::Builder b) {
  b.setMask(s.mask);
  b.setMode(s.mode);
  b.setUid(s.uid);
  b.setGid(s.gid);
  b.setSize(s.size);
  to_wire(s.atime, b.initAtime());
  to_wire(s.mtime, b.initMtime());
}

DirEntry from_wire(proto::mds::DirEntry::Reader r) {
  DirEntry e;
  e.name = r.getName();
  e.ino = InodeId(r.getIno());
  e.mode = r.getMode();
  e.cookie = r.getCookie();
  if (r.hasAttr()) e.attr = from_wire(r.getAttr());
  return e;
}

void to_wire(const DirEntry& e, proto::mds::DirEntry::Builder b) {
  b.setName(e.name);
  b.setIno(e.ino.value);
  b.setMode(e.mode);
  b.setCookie(e.cookie);
  if (e.attr) to_wire(*e.attr, b.initAttr());
}

DirPage from_wire(proto::mds::Reply::ReaddirReply::Reader r) {
  DirPage p;
  p.eof = r.getEof();
  for (auto e : r.getEntries()) p.entries.push_back(from_wire(e));
  return p;
}

void to_wire(const DirPage& p, proto::mds::Reply::ReaddirReply::Builder b) {
  b.setEof(p.eof);
  auto list = b.initEntries(static_cast<unsigned>(p.entries.size()));
  for (size_t i = 0; i < p.entries.size(); ++i) to_wire(p.entries[i], list[static_cast<unsigned>(i)]);
}

FileInfo from_wire(proto::mds::Reply::FileSummary::Reader r) {
  return FileInfo{InodeId(r.getIno()), r.getSize(), from_wire(r.getLayout()), r.getOrphan()};
}

void to_wire(const FileInfo& f, proto::mds::Reply::FileSummary::Builder b) {
  b.setIno(f.ino.value);
  b.setSize(f.size);
  to_wire(f.layout, b.initLayout());
  b.setOrphan(f.orphan);
}

FileScan from_wire(proto::mds::Reply::FileList::Reader r) {
  FileScan s;
  s.eof = r.getEof();
  for (auto f : r.getFiles()) s.files.push_back(from_wire(f));
  return s;
}

void to_wire(const FileScan& s, proto::mds::Reply::FileList::Builder b) {
  b.setEof(s.eof);
  auto list = b.initFiles(static_cast<unsigned>(s.files.size()));
  for (size_t i = 0; i < s.files.size(); ++i) to_wire(s.files[i], list[static_cast<unsigned>(i)]);
}

ServerInfo from_wire(proto::ServerInfo::Reader r) {
  return ServerInfo{ServerId(r.getId()), r.getAddress(), r.getCapacityBytes(), r.getFreeBytes(), r.getAlive()};
}

void to_wire(const ServerInfo& s, proto::ServerInfo::Builder b) {
  b.setId(s.id.value);
  b.setAddress(s.address);
  b.setCapacityBytes(s.capacity_bytes);
  b.setFreeBytes(s.free_bytes);
  b.setAlive(s.alive);
}

ObjectId from_wire(proto::storage::ObjectId::Reader r) {
  return ObjectId{InodeId(r.getIno()), r.getIndex()};
}

void to_wire(ObjectId o, proto::storage::ObjectId::Builder b) {
  b.setIno(o.ino.value);
  b.setIndex(o.index);
}

}  // namespace pvfs::rpc
