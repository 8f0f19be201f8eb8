#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0015-config-check.t: "bgn config check" catches what would stop a
# system instance's broker on a host: an empty config directory, a host
# missing from the list, a missing or exposed certificate, a certificate
# whose halves do not belong together, a malformed or unbindable bind
# address.  Every problem is one line; all are reported.  Also
# "bgn config dump --defaults".

test_description='bgn config check: the host side of a static configuration'

. "$(dirname "$0")/sharness.sh"

# static.toml: four hosts and this one, sharing cert, bound to loopback.
HOST=$(hostname)
write_config () {
	cat >static.toml <<-EOT
	[bootstrap]
	curve_cert = "$PWD/cert"
	hosts = [
	  { host = "node[0-3]", bind = "tcp://127.0.0.1:*" },
	  { host = "$HOST", bind = "$1" },
	]
	EOT
}

test_expect_success 'a directory without *.toml is an error, for check and broker' '
	mkdir empty &&
	test_expect_code 1 bgn config check empty 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^empty: no \*.toml file in this directory$" err &&
	test_expect_code 1 bgn-broker -c empty 2>berr &&
	grep "empty: no \*.toml file in this directory" berr
'

test_expect_success 'a good static config passes silently for a listed host' '
	bgn keygen cert >/dev/null &&
	write_config "tcp://127.0.0.1:*" &&
	bgn config check --host node2 static.toml >out 2>err &&
	test_must_be_empty out &&
	test_must_be_empty err &&
	bgn config check static.toml 2>err &&
	test_must_be_empty err
'

test_expect_success 'a host not in the list is named, with the list' '
	test_expect_code 1 bgn config check --host node9 static.toml 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^static.toml: host .node9. is not in bootstrap.hosts (node\[0-3\],$HOST)$" err
'

test_expect_success 'a fully qualified name matches its first label' '
	bgn config check --host node1.cluster.example static.toml
'

test_expect_success 'a secret readable by others: one line with the fix' '
	chmod 644 cert_secret &&
	test_expect_code 1 bgn config check --host node0 static.toml 2>err &&
	chmod 600 cert_secret &&
	test $(wc -l <err) -eq 1 &&
	grep "^static.toml: certificate secret $PWD/cert_secret has mode 0644, not 0600 (fix: chmod 600 $PWD/cert_secret)$" err
'

test_expect_success 'halves of two certificates do not belong together' '
	bgn keygen other >/dev/null &&
	cp cert cert.good && cp other cert &&
	test_expect_code 1 bgn config check --host node0 static.toml 2>err &&
	cp cert.good cert &&
	test $(wc -l <err) -eq 1 &&
	grep "certificate $PWD/cert and $PWD/cert_secret do not belong together" err
'

test_expect_success 'a missing certificate says how to make one' '
	mv cert cert.away &&
	test_expect_code 1 bgn config check --host node0 static.toml 2>err &&
	mv cert.away cert &&
	grep "^static.toml: certificate $PWD/cert: No such file or directory (make it with: bgn keygen $PWD/cert)$" err
'

test_expect_success 'a malformed bind address is one line' '
	write_config "tcp://127.0.0.1" &&
	test_expect_code 1 bgn config check --host $HOST static.toml 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^static.toml: bind address of .$HOST.: tcp://127.0.0.1: no HOST:PORT after tcp://$" err
'

test_expect_success 'this host: a bind address that cannot be bound is found' '
	write_config "tcp://nosuchif0:8050" &&
	test_expect_code 1 bgn config check static.toml 2>err &&
	test $(wc -l <err) -eq 1 &&
	grep "^static.toml: bind address tcp://nosuchif0:8050 cannot be bound on this host: " err &&
	bgn config check --host node0 static.toml
'

test_expect_success 'several problems: every one reported, one line each' '
	write_config "tcp://127.0.0.1" &&
	chmod 644 cert_secret &&
	test_expect_code 1 bgn config check --host $HOST static.toml 2>err &&
	chmod 600 cert_secret &&
	test $(wc -l <err) -eq 2 &&
	grep "has mode 0644" err && grep "no HOST:PORT" err
'

test_expect_success '--no-host checks the schema only; --host needs a host list' '
	bgn config check --no-host --host node9 static.toml &&
	printf "[overlay]\nttl = 4\n" >plain.toml &&
	bgn config check plain.toml &&
	test_expect_code 1 bgn config check --host node1 plain.toml 2>err &&
	grep "^plain.toml: --host node1: there is no bootstrap.hosts" err
'

# 200,000 hosts: each rank's entry was found by decoding the host lists
# again (and duplicates by a search per rank): minutes of CPU.  The
# timeout only guards against that (it is 100 times what it takes).
test_expect_success '200,000 hosts are checked without a quadratic step' '
	cat >big.toml <<-EOT &&
	[bootstrap]
	curve_cert = "$PWD/cert"
	hosts = [
	  { host = "node[0-99999]", bind = "tcp://127.0.0.1:*" },
	  { host = "big[100000-199998]", bind = "tcp://127.0.0.1:*" },
	  { host = "$HOST", bind = "tcp://127.0.0.1:*" },
	]
	EOT
	timeout 30 bgn config check --host node7 big.toml 2>big.err &&
	test_must_be_empty big.err &&
	sed "s/big\[100000-199998\]/node[99999-199997]/" big.toml >dup.toml &&
	test_expect_code 1 timeout 30 bgn config check --host node7 dup.toml 2>dup.err &&
	grep "host .node99999. appears more than once" dup.err
'

test_expect_success 'dump --defaults prints every key with its default' '
	bgn config dump --defaults >defaults.json &&
	grep "\"peer_timeout\": \"10s\"" defaults.json &&
	grep "\"heal_threshold\": -1" defaults.json &&
	grep "\"default_port\": 8050" defaults.json &&
	grep "\"curve\": true" defaults.json &&
	test_must_fail grep "\"hosts\"" defaults.json
'

test_done
