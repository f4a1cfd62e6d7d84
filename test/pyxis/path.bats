#!/usr/bin/env bats
# The command is looked up on the image's PATH, not the node's
# (https://bugs.schedmd.com/show_bug.cgi?id=7257).

load ./common

@test "a binary only the image has, in /usr/local/bin (redis-server)" {
  on_node sh -c '! command -v redis-server' >/dev/null || skip "redis-server is on the node too"
  step_ok --container-image="$REG/redis:5.0.8" redis-server --version
  expect 'v=5.0.8'
}

@test "a binary on a PATH only the image sets (rabbitmqctl)" {
  on_node sh -c '! command -v rabbitmqctl' >/dev/null || skip "rabbitmqctl is on the node too"
  step_ok --container-image="$REG/rabbitmq:3.8.3" rabbitmqctl version
  last_is 3.8.3
}
