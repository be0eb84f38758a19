// Command kstatus prints the status that sigs.k8s.io/cli-utils' kstatus library computes for each object it
// reads: the library Flux (wait: true, health checks) and kpt wait on. It reads a JSON array of Kubernetes
// objects on stdin and writes a JSON array with one {status, message} per object, in order (docs/health.md).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("reading stdin: %v", err)
	}
	var objects []json.RawMessage
	if err := json.Unmarshal(input, &objects); err != nil {
		fail("stdin is not a JSON array of objects: %v", err)
	}
	verdicts := make([]verdict, 0, len(objects))
	for _, raw := range objects {
		verdicts = append(verdicts, compute(raw))
	}
	out, err := json.Marshal(verdicts)
	if err != nil {
		fail("encoding the result: %v", err)
	}
	fmt.Println(string(out))
}

// compute decodes the object as a Kubernetes client does (integers as int64, which kstatus requires of
// metadata.generation and status.observedGeneration) and asks kstatus for its status.
func compute(raw json.RawMessage) verdict {
	object := &unstructured.Unstructured{}
	if err := object.UnmarshalJSON(raw); err != nil {
		return verdict{Error: fmt.Sprintf("decoding the object: %v", err)}
	}
	result, err := status.Compute(object)
	if err != nil {
		return verdict{Error: err.Error()}
	}
	return verdict{Status: result.Status.String(), Message: result.Message}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kstatus: "+format+"\n", args...)
	os.Exit(2)
}
