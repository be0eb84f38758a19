// Command argocd-lua runs Argo CD resource health checks (health.lua) the way an Argo CD application
// controller runs a customization from argocd-cm: in github.com/yuin/gopher-lua, the interpreter Argo CD
// embeds, with only the package, base and table libraries open (no string, math or os: a customization
// gets those only with useOpenLibs), the object as the global `obj`, one second to finish, and a returned
// table read as {status, message}.
//
//	argocd-lua test <dir>          every health.lua under dir against its health_test.yaml, Argo CD's own
//	                               test format; prints a JSON array of cases, exits 1 if one fails
//	argocd-lua health <health.lua> each object of a JSON array on stdin; prints a JSON array of results
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

type health struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

// The health codes Argo CD accepts from a script; anything else reads as Unknown.
var codes = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

const invalidCode = "Lua returned an invalid health status"

func main() {
	if len(os.Args) != 3 {
		fail("usage: argocd-lua test <dir> | argocd-lua health <health.lua> < objects.json")
	}
	switch os.Args[1] {
	case "test":
		os.Exit(runTests(os.Args[2]))
	case "health":
		runHealth(os.Args[2])
	default:
		fail("unknown command %q", os.Args[1])
	}
}

// evaluate runs the script against one object, as decoded by the caller.
func evaluate(script string, object map[string]any) health {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return health{Error: fmt.Sprintf("opening %s: %v", lib.name, err)}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, object))
	if err := l.DoString(script); err != nil {
		return health{Error: err.Error()}
	}
	returned := l.Get(-1)
	table, ok := returned.(*lua.LTable)
	if !ok {
		return health{Error: fmt.Sprintf("expect table output from Lua script, not %s", returned.Type())}
	}
	status, message := table.RawGetString("status"), table.RawGetString("message")
	if message != lua.LNil && message.Type() != lua.LTString {
		return health{Error: fmt.Sprintf("message is a %s, not a string", message.Type())}
	}
	if status.Type() != lua.LTString || !codes[status.String()] {
		return health{Status: "Unknown", Message: invalidCode}
	}
	result := health{Status: status.String()}
	if message != lua.LNil {
		result.Message = message.String()
	}
	return result
}

// toLua turns a decoded JSON value into Lua values: objects and arrays become tables, numbers (int64 from a
// Kubernetes client, float64 from YAML test data) become numbers.
func toLua(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		table := l.CreateTable(len(v), 0)
		for _, item := range v {
			table.Append(toLua(l, item))
		}
		return table
	case map[string]any:
		table := l.CreateTable(0, len(v))
		for key, item := range v {
			table.RawSetString(key, toLua(l, item))
		}
		return table
	default:
		return lua.LNil
	}
}

// runHealth evaluates the script for live objects, decoded as Argo CD's cluster cache holds them.
func runHealth(scriptPath string) {
	script, err := os.ReadFile(scriptPath)
	if err != nil {
		fail("%v", err)
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	var objects []json.RawMessage
	if err := json.Unmarshal(input, &objects); err != nil {
		fail("stdin is not a JSON array of objects: %v", err)
	}
	results := make([]health, 0, len(objects))
	for _, raw := range objects {
		object := &unstructured.Unstructured{}
		if err := object.UnmarshalJSON(raw); err != nil {
			results = append(results, health{Error: fmt.Sprintf("decoding the object: %v", err)})
			continue
		}
		results = append(results, evaluate(string(script), object.Object))
	}
	print(results)
}

type testCase struct {
	Script   string `json:"script"`
	Input    string `json:"inputPath"`
	Expected health `json:"expected"`
	Actual   health `json:"actual"`
	Passed   bool   `json:"passed"`
}

type testFile struct {
	Tests []struct {
		InputPath    string `json:"inputPath"`
		HealthStatus health `json:"healthStatus"`
	} `json:"tests"`
}

// runTests runs each health.lua under root against the cases of the health_test.yaml beside it.
func runTests(root string) int {
	var cases []testCase
	err := filepath.WalkDir(root, func(path string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() || entry.Name() != "health.lua" {
			return err
		}
		dir := filepath.Dir(path)
		script, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var tests testFile
		if err := readYAML(filepath.Join(dir, "health_test.yaml"), &tests); err != nil {
			return err
		}
		if len(tests.Tests) == 0 {
			return fmt.Errorf("%s: no tests", filepath.Join(dir, "health_test.yaml"))
		}
		for _, test := range tests.Tests {
			var object map[string]any
			if err := readYAML(filepath.Join(dir, test.InputPath), &object); err != nil {
				return err
			}
			actual := evaluate(string(script), object)
			cases = append(cases, testCase{
				Script:   path,
				Input:    test.InputPath,
				Expected: test.HealthStatus,
				Actual:   actual,
				Passed:   actual == test.HealthStatus,
			})
		}
		return nil
	})
	if err != nil {
		fail("%v", err)
	}
	if len(cases) == 0 {
		fail("no health.lua under %s", root)
	}
	print(cases)
	for _, c := range cases {
		if !c.Passed {
			return 1
		}
	}
	return 0
}

func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return errors.Join(fmt.Errorf("%s", path), err)
	}
	return nil
}

func print(value any) {
	out, err := json.Marshal(value)
	if err != nil {
		fail("encoding the result: %v", err)
	}
	fmt.Println(string(out))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "argocd-lua: "+format+"\n", args...)
	os.Exit(2)
}
