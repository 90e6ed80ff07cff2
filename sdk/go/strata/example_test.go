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

// ClassifyBot tells an AI bot's user agent as Strata's ingest does.
func ExampleClassifyBot() {
	bot, ok := strata.ClassifyBot("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	fmt.Println(ok, bot.Name, bot.Operator, bot.CategoryLabel)
	// Output: true GPTBot OpenAI AI crawler (training/index)
}
