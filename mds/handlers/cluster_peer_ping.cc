// peerPing: a member's heartbeat; the answer is this member's state.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> peer_ping(Call& c) {
  auto p = c.req.getPeerPing();
  c.mds.cluster().learn_iosched_setting(p.getSetting());
  c.mds.cluster().note_qos_models_version(MdsId(p.getFrom()), p.getSetting().getQosModelsVersion());
  c.mds.cluster().answer_ping(MdsId(p.getFrom()), text(p.getMap()), c.reply.initPeer());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
