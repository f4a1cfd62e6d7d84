#!/usr/bin/env bats
# The image's ENTRYPOINT: run on request (--container-entrypoint), its output
# shown on request (--container-entrypoint-log), or run by hand.

load ./common

setup() { forget nginx-test; }
teardown() { forget nginx-test; }

entrypoints_allowed() {
  if on_node test -f /etc/enroot/entrypoint; then
    skip "this cluster's enroot configuration disables entrypoints"
  fi
}

@test "--container-entrypoint runs the image's entrypoint (dind sets DOCKER_HOST)" {
  entrypoints_allowed
  step_ok --container-image="$DIND" --container-entrypoint sh -c '[ -n "$DOCKER_HOST" ]'
  step_ok --container-image="$DIND" --no-container-entrypoint sh -c '[ -z "$DOCKER_HOST" ]'
}

@test "an entrypoint run by hand changes a named container" {
  step_ok --container-image="$REG/nginx:1.19.1" --container-name=nginx-test --container-remap-root nginx -v
  step_ok --container-name=nginx-test cat /etc/nginx/conf.d/default.conf
  expect 'listen       80;'
  expect_not 'listen  \[::\]:80;'
  step_ok --container-name=nginx-test --container-remap-root /docker-entrypoint.sh nginx -v
  step_ok --container-name=nginx-test cat /etc/nginx/conf.d/default.conf
  expect 'listen  \[::\]:80;'
}

@test "the entrypoint sees only the variables --container-env passes" {
  entrypoints_allowed
  step_ok --container-image="$DIND" --container-entrypoint sh -c 'echo $DOCKER_HOST'
  last_is tcp://docker:2375
  export DOCKER_TLS_VERIFY=1
  step_ok --container-image="$DIND" --container-entrypoint sh -c 'echo $DOCKER_HOST'
  last_is tcp://docker:2375
  step_ok --container-image="$DIND" --container-entrypoint --container-env=DOCKER_TLS_VERIFY \
    sh -c 'echo $DOCKER_HOST'
  last_is tcp://docker:2376
}

@test "--container-entrypoint-log shows what the entrypoint prints" {
  entrypoints_allowed
  step_ok --container-image="$CUDA_RUNTIME" --container-entrypoint true
  expect_not '== CUDA =='
  step_ok --container-image="$CUDA_RUNTIME" --container-entrypoint --container-entrypoint-log true
  expect '== CUDA =='
}
