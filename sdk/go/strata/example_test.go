package strata_test

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/strata-analytics/strata/sdk/go/strata"
)

// A Go web server reports the page fetches of AI bots: the middleware
// sees every request, and queues a $pageview for each AI bot's, which
// Strata's ingest stores as $bot_pageview and the Acquisition panel
// counts. Close sends what is still queued when the server stops. (This
// example is compiled, not run: it would send to strata.example.com.)
func Example() {
	client := strata.New(strata.Options{
		APIKey: os.Getenv("STRATA_API_KEY"),
		Host:   "https://strata.example.com",
	})
	defer client.Close(context.Background())

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "Hello") })
	_ = http.Server{Addr: "127.0.0.1:8080", Handler: client.Middleware(mux)} // then ListenAndServe

	// Events of your own, from anywhere in the server:
	client.Capture(strata.Event{Name: "invoice_paid", DistinctID: "user_42", Properties: map[string]any{"plan": "pro"}})
}

// A Go server runs an experiment: Variant evaluates the flag here, from
// the product's configuration read once and kept for 5 minutes, and queues
// the user's $exposure the first time, which the experiment's results
// count. (Compiled, not run: it would ask strata.example.com.)
func ExampleClient_Variant() {
	client := strata.New(strata.Options{APIKey: os.Getenv("STRATA_API_KEY"), Host: "https://strata.example.com"})
	defer client.Close(context.Background())
	// Optional: read the flags at start-up, so that the first request does
	// not wait for them.
	if err := client.LoadFlags(context.Background()); err != nil {
		fmt.Println("flags: every user gets control until Strata answers:", err)
	}

	http.HandleFunc("/checkout", func(w http.ResponseWriter, r *http.Request) {
		userID := r.Header.Get("X-User-ID")
		switch client.Variant(r.Context(), "checkout_flow", userID) {
		case "treatment":
			fmt.Fprintln(w, "the new checkout")
		default: // "control": also for users outside the experiment
			fmt.Fprintln(w, "the checkout")
		}
	})
}

// ClassifyBot tells an AI bot's user agent as Strata's ingest does.
func ExampleClassifyBot() {
	bot, ok := strata.ClassifyBot("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	fmt.Println(ok, bot.Name, bot.Operator, bot.CategoryLabel)
	// Output: true GPTBot OpenAI AI crawler (training/index)
}
