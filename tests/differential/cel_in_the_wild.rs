//! CEL validation rules as operators write them, over a realistic spec, created with a dry run on both servers
//! (the rest of the CEL cases are in `cel`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::cel::named_crd;
use crate::support::{Transcript, run};

/// Rules as operators write them, over a realistic spec (bounded and unbounded fields, a root rule on
/// `metadata`, an embedded resource, a map list), each created with a dry run on both servers: both accept
/// the same ones and refuse the others with the same message.
#[tokio::test]
async fn cel_rules_as_written_in_the_wild() {
    run("cel_rules_as_written_in_the_wild", &[], rules_in_the_wild).await;
}

async fn rules_in_the_wild(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let spec = |rule: &str| {
        json!({"type": "object", "properties": {
            "replicas": {"type": "integer"}, "minReplicas": {"type": "integer"},
            "image": {"type": "string", "maxLength": 253}, "mode": {"type": "string", "enum": ["a", "b"]},
            "name": {"type": "string"}, "ratio": {"type": "number"}, "enabled": {"type": "boolean"},
            "timeout": {"type": "string", "format": "duration"}, "since": {"type": "string", "format": "date-time"},
            "memory": {"x-kubernetes-int-or-string": true},
            "hosts": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 253}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "maxProperties": 32, "additionalProperties": {"type": "string", "maxLength": 63}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "ports": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}, "protocol": {"type": "string", "maxLength": 8}}}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}},
            "x-kubernetes-validations": [{"rule": rule}]})
    };
    let crds = Api::<CustomResourceDefinition>::all(client);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let rules = [
        "self.minReplicas <= self.replicas",
        "!has(self.minReplicas) || self.minReplicas >= 0",
        "has(self.image) == has(self.name)",
        "self.image.matches('^[a-z0-9./-]+(:[a-z0-9.]+)?$')",
        "self.name.matches('^[a-z]+$')",
        "self.name.size() <= 63 && self.name.startsWith('a')",
        "self.mode in ['a', 'b']",
        "self.hosts.all(h, h.endsWith('.example.com'))",
        "self.tags.all(t, t.size() < 10)",
        "self.tags.exists(t, t == 'x')",
        "self.tags.size() <= 10",
        "self.hosts.filter(h, h.startsWith('a')).size() < 3",
        "self.hosts.map(h, h.size()).all(s, s > 0)",
        "self.labels.all(k, k.startsWith('app'))",
        "self.annotations.all(k, self.annotations[k].size() < 100)",
        "'app' in self.labels && self.labels['app'] != ''",
        "self.ports.all(p, p.port > 0 && p.port < 65536)",
        "self.ports.exists_one(p, p.name == 'http')",
        "self.ports.all(p, self.ports.exists_one(q, q.port == p.port))",
        "!has(self.ports) || self.ports.all(p, !has(p.protocol) || p.protocol in ['TCP', 'UDP'])",
        "self.ratio >= 0.0 && self.ratio <= 1.0",
        "self.ratio < 2",
        "self.enabled || self.replicas == 0",
        "self.timeout < duration('1h') && self.since > timestamp('2020-01-01T00:00:00Z')",
        "duration(self.name) > duration('0s')",
        "int(self.name) > 0 && string(self.replicas) != ''",
        "type(self.memory) == string ? quantity(self.memory).isLessThan(quantity('1Gi')) : self.memory < 1024",
        "self.template.apiVersion == 'v1' && self.template.kind == 'Pod' && self.template.metadata.name != ''",
        "self.template.spec.containers.size() > 0",
        "self.image.split(':').size() == 2 && self.image.split(':')[1] != 'latest'",
        "self.image.indexOf(':') > 0 && self.image.substring(0, 3) == 'reg' && self.image.charAt(0) == 'r'",
        "self.hosts.join(',').size() < 1000",
        "self.tags.join(',').size() < 1000",
        "self.annotations.exists(k, self.annotations[k].contains('x'))",
        "self.tags.all(a, self.tags.all(b, a == b))",
        "self.hosts.all(a, self.hosts.all(b, a.contains(b)))",
        "self.replicas == 1.0",
        "self.replicas + self.minReplicas > 2 && self.replicas * 2 < 100 && self.replicas % 2 == 0",
        "self.name + self.image != ''",
        "self.hosts + self.tags != []",
        "self.labels.exists(k, k == 'a') ? self.labels['a'] == 'b' : true",
        "self.hosts[0] == 'a'",
        "self.ports[0].port == 1",
        "self.labels.size() > 0 && size(self.hosts) > 0",
        "self.name.lowerAscii() == self.name && self.name.upperAscii() != '' && self.name.trim() == self.name",
        "self.name.replace('a', 'b') != ''",
        "self.hosts.isSorted() && self.hosts.sum() == ''",
        "[1, 2, 3].sum() == 6 && [self.replicas, 2].max() > 1",
        "lists.range(5).size() == 5 && self.hosts.slice(0, 1).size() <= 1 && self.hosts.reverse().size() >= 0",
        "self.hosts.distinct().size() == self.hosts.size() && self.hosts.sort() == self.hosts",
        "sets.equivalent(self.hosts, self.tags) && sets.intersects(self.hosts, ['a'])",
        "self.name.format([self.replicas]) != '' && strings.quote(self.name) != ''",
        "url(self.image).getScheme() == 'https' && url(self.image).getPort() == ''",
        "ip(self.name).isLoopback() && ip.isCanonical(self.name) && string(ip(self.name)) == self.name",
        "cidr(self.name).ip().family() == 4 && cidr(self.name).masked().prefixLength() == 8",
        "cidr(self.name).containsCIDR('10.0.0.0/24') && cidr(self.name).containsIP(ip('10.0.0.1'))",
        "semver(self.name).major() > 0 && isSemver(self.name, true)",
        "quantity(self.name).add(1).sub(quantity('1')).asInteger() > 0 && quantity(self.name).sign() == 1",
        "quantity(self.name).compareTo(quantity('1')) > 0 && quantity(self.name).asApproximateFloat() > 0.5",
        "format.named('dns1123Subdomain').value().validate(self.name).hasValue()",
        "self.since.getFullYear() > 2000 && self.since.getHours('UTC') < 24 && self.timeout.getSeconds() > 0",
        "self.name.startsWith(self.replicas)",
        "self.hosts.all(h, h)",
        "self.labels.size",
        "self.nope.size() > 0",
        "self.ports.all(p, p.nope > 0)",
        "self.name.exists(c, c == 'a')",
        "has(self.name.size)",
        "self.replicas.nope == 1",
        "self.name == 1 || self.replicas == 'a'",
        "dyn(self.name) == 1",
        "self.name.matches(self.image)",
        "self.tags.all(t, t.matches('^[a-z]+$'))",
        "self.annotations.all(k, self.annotations[k].matches('^[a-z]+$'))",
        "self.metadata.name.size() < 10",
        "size(self.image) < 10 && size(self.labels) < 10 && size(b'abc') == 3",
        "optional.ofNonZeroValue(self.name).or(optional.of('x')).value() != ''",
        "self.hosts.first().orValue('') != '' && self.hosts.last().hasValue()",
        // CEL's optional syntax, which kube-apiserver's environment enables.
        "self.?name.orValue('') != ''",
        "self.?labels.?app.orValue('x') != ''",
        "self.?ports.orValue([]).size() < 9",
        "self.hosts[?0].orValue('') != '' && self.labels[?'app'].hasValue()",
        "[?optional.of(1), ?optional.none()].size() == 1 && {?'a': optional.of(1)}.size() == 1",
        "self.?template.?spec.hasValue()",
        "self.?image.orValue('').size() < 100 && self.?tags.orValue([]).all(t, t.size() < 5)",
        "self.?annotations.orValue({}).all(k, k.matches('^[a-z]+$'))",
        "self.?nope.hasValue()",
        "self.?replicas.orValue('a') == 'a'",
        "self.?name.size() > 0",
        "self.?replicas.?x.hasValue()",
        "self.labels.exists(k, self.labels[k] == self.name)",
        "self.hosts.indexOf('a') == self.hosts.lastIndexOf('a')",
        "self.name.findAll('[a-z]', 2).size() < 3",
        "bytes(self.name).size() < 10 && string(bytes(self.name)) == self.name",
        "uint(self.replicas) > 1u && double(self.replicas) > 0.5",
        "timestamp(self.name) < self.since && self.since - duration('1h') < self.since",
        "-self.replicas < 0 && !self.enabled",
        "self.hosts.exists(h, h == self.name) == ('x' in self.hosts)",
        "sign(quantity(self.name)) == 1 && quantity(self.name).isInteger()",
        "self.hosts.min() != '' && self.ports.map(p, p.port).max() < 100",
        "self.hosts.sort().size() > 0 && self.tags.sort().size() >= 0",
        "[self.memory, 1].max() == 1",
        "self.name.matches('[') || self.image.matches('^a(')",
        "duration('1x') > self.timeout",
        "timestamp('yesterday') < self.since && timestamp(1) < self.since",
        "[1, 'a'].size() == 2 && {'a': 1, 'b': 'x'}.size() == 2",
        "[[1], ['a']].size() == 2",
        "self.hosts.all(h, h in ['a', self.name])",
        "optional.unwrap([optional.of(self.name)]).size() == 1 && [optional.of(1)].unwrapOpt().size() == 1",
        "optional.of(self.hosts)[0].hasValue() && optional.of(self.labels)['a'].orValue('') == ''",
        "self.hosts.unwrapOpt().size() == 0",
        "self.labels.all(k, v, k.startsWith('a') && v.size() < 10)",
        "self.hosts.exists(i, h, i > 0 && h == 'a') && self.hosts.existsOne(i, h, h == 'a')",
        "self.tags.all(i, t, t.matches('^[a-z]+$'))",
        "self.annotations.exists(k, v, v.contains(k))",
        "self.labels.all(k, v, v > 1)",
        "self.hosts.all(i, h, h)",
        "self.replicas.all(i, h, true)",
        "self.hosts.transformList(i, h, h.size()).all(s, s > 0)",
        "self.hosts.transformList(i, h, i > 0, h + 'x').size() >= 0",
        "self.labels.transformMap(k, v, v.size()).all(k, k != '')",
        "self.labels.transformMap(k, v, k != 'a', v + v).size() >= 0",
        "self.labels.transformMapEntry(k, v, {k + 'x': v}).size() >= 0",
        "self.tags.transformList(i, t, t.matches('^a')).size() > 0",
        "self.labels.transformMap(k, v, v > 1).size() > 0",
        "self.hosts.transformList(i, h, h, 1).size() > 0",
        "cel.bind(x, self.name, x.size() > 0)",
    ];
    // Rules whose estimated cost lands near the budget, to compare the estimates' factors.
    let costly = |rule: &str| {
        json!({"type": "object", "properties": {"items": {"type": "array", "items": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "value": {"type": "integer"}, "short": {"type": "string", "maxLength": 20},
                "tags": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10}},
                "labels": {"type": "object", "maxProperties": 4, "additionalProperties": {"type": "string", "maxLength": 8}},
                "data": {"type": "string", "format": "byte"}, "any": {"x-kubernetes-int-or-string": true}},
            "x-kubernetes-validations": [{"rule": rule}]}}}})
    };
    let costly_rules = [
        "self.name.size() < 10",
        "self.name.startsWith('a') && self.name.endsWith('z')",
        "self.name.contains('-')",
        "self.name == 'x' || self.short == 'y'",
        "self.name + self.short != ''",
        "self.short.matches('^[a-z]+$')",
        "self.tags.all(t, t.matches('^[a-z]+$'))",
        "self.tags.exists(t, t == self.short)",
        "self.tags.map(t, t + '-').size() > 0",
        "self.tags.filter(t, t.size() > 2).size() > 0",
        "self.labels.all(k, self.labels[k].size() < 5)",
        "self.short in self.tags",
        "self.tags.join(',').size() < 100",
        "self.short.split(',').size() < 3",
        "self.short.lowerAscii().upperAscii() == self.short",
        "self.short.replace('a', 'bb').size() < 30",
        "self.short.replace('', 'xyz').size() < 30",
        "self.short.substring(1) != '' && self.short.trim() != ''",
        "self.short.indexOf('a') >= 0 && self.short.lastIndexOf('a') >= 0",
        "self.short.find('[0-9]+') != '' && self.short.findAll('[a-z]').size() > 0",
        "isURL(self.short) && url(self.short).getHost() != ''",
        "isIP(self.short) && ip(self.short).isGlobalUnicast()",
        "isCIDR(self.short) && cidr(self.short).containsIP(self.short) && cidr(self.short).containsCIDR(self.short)",
        "isQuantity(self.short) && quantity(self.short) == quantity('1')",
        "isSemver(self.short) && semver(self.short).isGreaterThan(semver('1.0.0'))",
        "format.dns1123Label().validate(self.short) == optional.none()",
        "format.named('dns1123Label').value().validate(self.name).hasValue()",
        "size(self.data) < 10 && self.data == b'abc'",
        "self.any == 1 || string(self.any) == 'x'",
        "[self.short, 'a'].exists(x, x == 'a') && {'a': self.short}['a'] != ''",
        "self.value > 0 ? self.tags.size() > 1 : self.labels.size() > 1",
        "sets.contains(self.tags, [self.short]) && self.tags.sort() == self.tags",
        "self.tags.distinct().size() == self.tags.size() && self.tags.reverse().size() > 0",
        "self.tags.slice(0, 2).size() == 2 && lists.range(3).size() == 3",
        "self.tags.isSorted() && self.tags.min() != self.tags.max()",
        "url('https://a.b') == url(self.short)",
        "ip(self.short) == ip('1.2.3.4') && cidr(self.short) == cidr('1.2.3.0/24')",
        "format.dns1123Label() == format.named('x').value()",
        "self.short.format([1, 'a']) != '' && strings.quote(self.short) != ''",
        "bytes(self.short).size() > 0 && string(self.data) != ''",
        "self.tags.all(a, self.tags.all(b, a != b || a == b))",
        "self.name.matches(self.short)",
        "self.tags.exists(i, t, t == self.short)",
        "self.labels.all(k, v, v.matches('^[a-z]+$') && k.size() > 0)",
        "self.tags.existsOne(i, t, i == 0 && t == self.short)",
        "self.tags.transformList(i, t, t + self.short).size() > 0",
        "self.labels.transformMap(k, v, k + v).all(x, x != '')",
        "self.labels.transformMapEntry(k, v, {v: k}).size() > 0",
    ];
    for (i, rule) in costly_rules.into_iter().enumerate() {
        let crd: CustomResourceDefinition =
            serde_json::from_value(named_crd(&format!("costly{i}"), costly(rule))).expect("a CRD");
        let answer = match crds.create(&dry_run, &crd).await {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.to_string()),
        };
        t.note(rule, answer);
    }
    for (i, rule) in rules.into_iter().enumerate() {
        let crd: CustomResourceDefinition =
            serde_json::from_value(named_crd(&format!("wild{i}"), spec(rule))).expect("a CRD");
        let answer = match crds.create(&dry_run, &crd).await {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.to_string()),
        };
        t.note(rule, answer);
    }
    t
}
