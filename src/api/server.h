#pragma once

// The REST API of corrald (docs/api.md): request parsing, validation and the
// JSON views of clusters. It changes clusters only by writing desired state
// to the store and asking the reconciler for a pass.

#include <memory>
#include <string>

#include "corral/clock.h"
#include "corral/store.h"
#include "reconcile/reconciler.h"

namespace httplib {
class Server;
}

namespace corral {

class ApiServer {
 public:
  // `store`, `reconciler` and `clock` are not owned and must outlive this.
  ApiServer(Store& store, Reconciler& reconciler, Clock& clock);
  ~ApiServer();

  // Binds `host:port` (port 0 picks a free one). Fails with Unavailable when
  // the address is taken.
  Status bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until `stop`. Blocking; call from a thread of your own.
  void serve();
  void stop();

 private:
  void routes();

  Store& store_;
  Reconciler& reconciler_;
  Clock& clock_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
};

}  // namespace corral
