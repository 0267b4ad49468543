package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDeployFiles checks the deployment files against each other and the binary, for
// want of a Docker engine in CI: the Dockerfile's HEALTHCHECK runs the healthcheck
// subcommand of the binary it copies, /data is a VOLUME, the build uses BuildKit
// cache mounts; .dockerignore keeps .git and local data out; deploy/compose.yaml
// parses, runs Postgres and two replicas of this build on it, each with its own data
// volume, and passes only settings the program reads.
func TestDeployFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	docker := read("Dockerfile")
	for _, want := range []string{
		"# syntax=docker/dockerfile:1",
		"--mount=type=cache,target=/go/pkg/mod",
		"--mount=type=cache,target=/root/.cache/go-build",
		"COPY --from=build /out/threadwright /usr/local/bin/threadwright",
		`CMD ["/usr/local/bin/threadwright", "healthcheck"]`,
		`VOLUME ["/data"]`,
		"DATA_DIR=/data",
	} {
		if !strings.Contains(docker, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !strings.HasPrefix(docker, "# syntax=docker/dockerfile:1\n") {
		t.Error("the syntax directive must be the Dockerfile's first line")
	}
	// The build image's Go is go.mod's: the official images set GOTOOLCHAIN=local, so
	// an older one refuses to build, and the image must not drift from what CI tests.
	var goLine string
	for line := range strings.Lines(read("go.mod")) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			goLine = v
		}
	}
	if goLine == "" || !strings.Contains(docker, "FROM golang:"+goLine+"-") {
		t.Errorf("the Dockerfile builds with another Go than go.mod's %q (want FROM golang:%s-…)", goLine, goLine)
	}

	ignore := strings.Fields(read(".dockerignore"))
	for _, want := range []string{".git", "data", "**/*.db", "artifacts"} {
		if !strings.Contains(" "+strings.Join(ignore, " ")+" ", " "+want+" ") {
			t.Errorf(".dockerignore lacks %q", want)
		}
	}

	var compose struct {
		Services map[string]struct {
			Build       any               `yaml:"build"`
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			DependsOn   map[string]any    `yaml:"depends_on"`
			Healthcheck map[string]any    `yaml:"healthcheck"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal([]byte(read("deploy/compose.yaml")), &compose); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	if pg, ok := compose.Services["postgres"]; !ok || !strings.HasPrefix(pg.Image, "postgres:") || pg.Healthcheck == nil {
		t.Errorf("deploy/compose.yaml: want a postgres service with a health check, got %+v", pg)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(read("docs/configuration.md"), "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "`"); ok && strings.HasPrefix(line, "| `") {
			known[name] = true
		}
	}
	replicas, dataVolumes := 0, map[string]bool{}
	for name, svc := range compose.Services {
		if !strings.HasPrefix(name, "threadwright") {
			continue
		}
		replicas++
		if svc.Build == nil || svc.DependsOn["postgres"] == nil {
			t.Errorf("%s: want a build of this repository that depends on postgres", name)
		}
		if !strings.HasPrefix(svc.Environment["DATABASE_URL"], "postgres://") || !strings.Contains(svc.Environment["DATABASE_URL"], "@postgres:5432/") {
			t.Errorf("%s: DATABASE_URL %q does not point at the postgres service", name, svc.Environment["DATABASE_URL"])
		}
		for k := range svc.Environment {
			if !known[k] {
				t.Errorf("%s: %s is not a setting documented in docs/configuration.md", name, k)
			}
		}
		for _, v := range svc.Volumes {
			if vol, ok := strings.CutSuffix(v, ":/data"); ok {
				if dataVolumes[vol] {
					t.Errorf("%s: data volume %s is shared: each replica needs its own spool", name, vol)
				}
				dataVolumes[vol] = true
				if _, declared := compose.Volumes[vol]; !declared {
					t.Errorf("%s: volume %s is not declared", name, vol)
				}
			}
		}
	}
	if replicas != 2 || len(dataVolumes) != 2 {
		t.Errorf("deploy/compose.yaml: %d replicas with %d data volumes; want 2 and 2", replicas, len(dataVolumes))
	}
}

// TestComposeSettingsLoad runs the replicas' settings of deploy/compose.yaml through
// the program's own configuration: each value interpolated as Compose does
// (${VAR}, ${VAR:-default}, ${VAR:?error}) from deploy/example.env, the image's ENV
// (Dockerfile) under them. A setting Compose passes as an empty string is set, not
// unset, for the program (its default does not apply), so the file must never pass
// one whose empty value the program refuses.
func TestComposeSettingsLoad(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dotenv := map[string]string{}
	for _, line := range strings.Split(read("deploy/example.env"), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			dotenv[k] = v
		}
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(read("deploy/compose.yaml")), &compose); err != nil {
		t.Fatal(err)
	}
	ref := regexp.MustCompile(`\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}`)
	for name, svc := range compose.Services {
		if !strings.HasPrefix(name, "threadwright") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"DATA_DIR": "/data", "HTTP_ADDR": "0.0.0.0:8080"} // the image's ENV
			for k, v := range svc.Environment {
				env[k] = ref.ReplaceAllStringFunc(v, func(m string) string {
					p := ref.FindStringSubmatch(m)
					val := dotenv[p[1]]
					switch {
					case p[2] == ":-" && val == "":
						return p[3]
					case p[2] == ":?" && val == "":
						t.Fatalf("%s: %s is required: %s", k, p[1], p[3])
					}
					return val
				})
			}
			for k, v := range env {
				t.Setenv(k, v)
			}
			var c Config
			if err := LoadConfig(&c); err != nil {
				t.Errorf("the settings of deploy/compose.yaml with deploy/example.env do not load: %v", err)
			}
		})
	}
}
