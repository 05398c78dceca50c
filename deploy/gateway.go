package deploy

// GatewayImage is the Envoy release the exported gateway runs: 1.32 is
// the first with least_request's FULL_SCAN selection, the exact
// least-outstanding choice capsim simulates (Envoy's default samples two).
const GatewayImage = "envoyproxy/envoy:v1.32.4"

// gatewayPolicy is the Envoy load-balancing policy of a simulated router,
// "" for a router the plain Kubernetes Service already is ("random": it
// spreads connections at random, as capsim prices it) or for one replica.
func (s Spec) gatewayPolicy() string {
	if s.Topology.Disaggregated() || s.Topology.Replicas.Count < 2 {
		return ""
	}
	switch s.Router {
	case "", "round-robin":
		return "ROUND_ROBIN"
	case "least-outstanding":
		return "LEAST_REQUEST"
	}
	return ""
}

// Balancer says what spreads requests over the deployment's replicas in
// its k8s.yaml, the router its prediction was priced with.
func (s Spec) Balancer() string {
	if s.Topology.Disaggregated() {
		return "Dynamo's Processor, routing " + routerName(s.Router) + " over the decode workers"
	}
	if s.Topology.Replicas.Count < 2 {
		return "the Kubernetes Service (one replica: no routing)"
	}
	switch s.gatewayPolicy() {
	case "ROUND_ROBIN":
		return "an Envoy gateway routing each request round-robin; a Kubernetes Service alone spreads connections at random, which capsim prices as the random router"
	case "LEAST_REQUEST":
		return "an Envoy gateway routing each request to the replica with the fewest in flight (least_request, FULL_SCAN)"
	}
	return "the Kubernetes Service, spreading connections at random"
}

func routerName(r string) string {
	if r == "" {
		return "round-robin"
	}
	return r
}

// envoyConfig is the gateway's configuration: one listener on port 8000
// proxying every request, without a timeout (a long generation streams for
// minutes), to the replicas' headless Service, which Envoy resolves to
// every ready pod (STRICT_DNS) and balances per request by policy. Its
// circuit breakers are lifted: Envoy's default 1,024 requests in flight
// would cap a load capsim never capped.
func envoyConfig(backend, policy string) ([]byte, error) {
	typed := func(t string) kv { return kv{"@type", "type.googleapis.com/" + t} }
	cluster := []kv{{"name", "replicas"}, {"type", "STRICT_DNS"}, {"dns_lookup_family", "V4_ONLY"}, {"connect_timeout", "5s"}}
	if policy == "LEAST_REQUEST" {
		cluster = append(cluster, kv{"load_balancing_policy", []kv{{"policies", []any{[]kv{{"typed_extension_config", []kv{
			{"name", "envoy.load_balancing_policies.least_request"},
			{"typed_config", []kv{typed("envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest"), {"selection_method", "FULL_SCAN"}}},
		}}}}}}})
	} else {
		cluster = append(cluster, kv{"lb_policy", policy})
	}
	limit := 1000000
	cluster = append(cluster,
		kv{"circuit_breakers", []kv{{"thresholds", []any{[]kv{{"max_connections", limit}, {"max_pending_requests", limit}, {"max_requests", limit}}}}}},
		kv{"load_assignment", []kv{{"cluster_name", "replicas"}, {"endpoints", []any{[]kv{{"lb_endpoints", []any{
			[]kv{{"endpoint", []kv{{"address", []kv{{"socket_address", []kv{{"address", backend}, {"port_value", 8000}}}}}}}},
		}}}}}}})
	hcm := []kv{typed("envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"),
		{"stat_prefix", "gateway"},
		{"stream_idle_timeout", "0s"},
		{"route_config", []kv{{"virtual_hosts", []any{[]kv{{"name", "replicas"}, {"domains", flow{"*"}},
			{"routes", []any{[]kv{{"match", []kv{{"prefix", "/"}}}, {"route", []kv{{"cluster", "replicas"}, {"timeout", "0s"}}}}}}}}}}},
		{"http_filters", []any{[]kv{{"name", "envoy.filters.http.router"}, {"typed_config", []kv{typed("envoy.extensions.filters.http.router.v3.Router")}}}}},
	}
	return marshal([]kv{{"static_resources", []kv{
		{"listeners", []any{[]kv{{"name", "http"}, {"address", []kv{{"socket_address", []kv{{"address", "0.0.0.0"}, {"port_value", 8000}}}}},
			{"filter_chains", []any{[]kv{{"filters", []any{[]kv{{"name", "envoy.filters.network.http_connection_manager"}, {"typed_config", hcm}}}}}}}}}},
		{"clusters", []any{cluster}},
	}}})
}

// gatewayObjects are the manifests of the gateway in front of the
// replicas: its ConfigMap, its Deployment (no GPU) and the replicas'
// headless Service it resolves; the deployment's Service then selects
// the gateway. labels gives an object's labels by component.
func gatewayObjects(name, policy string, labels func(string) []kv) ([][]kv, error) {
	backend := name + "-replicas"
	cfg, err := envoyConfig(backend, policy)
	if err != nil {
		return nil, err
	}
	cm := []kv{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", []kv{{"name", name + "-gateway"}, {"labels", labels("gateway")}}},
		{"data", []kv{{"envoy.yaml", literal(cfg)}}}}
	headless := []kv{{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", []kv{{"name", backend}, {"labels", labels("replicas")}}},
		{"spec", []kv{{"clusterIP", "None"}, {"selector", labels("replicas")}, {"ports", []any{[]kv{{"name", "http"}, {"port", 8000}, {"targetPort", 8000}}}}}}}
	container := []kv{{"name", "envoy"}, {"image", GatewayImage},
		{"args", []any{"-c", "/config/envoy.yaml"}},
		{"ports", []any{[]kv{{"name", "http"}, {"containerPort", 8000}}}},
		{"resources", []kv{{"requests", []kv{{"cpu", "1"}, {"memory", "512Mi"}}}}},
		{"volumeMounts", []any{[]kv{{"name", "config"}, {"mountPath", "/config"}}}}}
	dep := []kv{{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
		{"metadata", []kv{{"name", name + "-gateway"}, {"labels", labels("gateway")}}},
		{"spec", []kv{{"replicas", 1}, {"selector", []kv{{"matchLabels", labels("gateway")}}},
			{"template", []kv{{"metadata", []kv{{"labels", labels("gateway")}}},
				{"spec", []kv{{"containers", []any{container}}, {"volumes", []any{[]kv{{"name", "config"}, {"configMap", []kv{{"name", name + "-gateway"}}}}}}}}}}}}}
	return [][]kv{cm, headless, dep}, nil
}

// RouterLine says which router priced the prediction and what the export
// deploys for it; "" for one replica or decode worker (no routing).
func (s Spec) RouterLine() string {
	n := s.Topology.Replicas.Count
	if s.Topology.Disaggregated() {
		n = s.Topology.Decode.Count
	}
	if n < 2 {
		return ""
	}
	line := "The prediction was priced with the " + routerName(s.Router) + " router; "
	if amdGPU(s.GPU) && !s.Topology.Disaggregated() {
		return line + "put the replicas behind a balancer that routes so."
	}
	return line + "k8s.yaml deploys " + s.Balancer() + "."
}
