// Package annotations holds the operations on chart annotations, below
// every door that asks for them (the HTTP API today; the CLI and the
// importer call the same). The rules of an annotation's own fields are
// analytics.Annotation.Validate's; what this package adds are the rules of
// the operations: which answer a missing annotation or saved query gets,
// how many ids one bulk delete may name, how a page is cut. Who the caller
// is, what a write costs them (the rate limits) and how the answer is
// encoded (JSON, the CSV export) are the transport's. docs/annotations.md
// explains the rules.
package annotations

import (
	"context"
	"errors"
	"fmt"

	"strata/internal/analytics"
)

// Limits of the operations on annotations.
const (
	// DefaultPageSize is the dashboard's page (docs/annotations.md).
	DefaultPageSize = 20
	MaxPageSize     = 100
	// MaxPage keeps a page's offset far from overflowing.
	MaxPage = 1_000_000
	// MaxBulkDelete is how many ids one bulk delete may name.
	MaxBulkDelete = 1000
)

// ErrNotFound answers an annotation id the workspace does not have.
var ErrNotFound = analytics.Errorf(analytics.KindNotFound, "annotation_not_found",
	"There is no annotation with this id in this workspace.")

// Service runs the operations on one metadata store's annotations. Every
// operation is scoped to a workspace, which the caller resolved from its
// credential.
type Service struct {
	Store analytics.AnnotationStore
}

// Create validates a (WorkspaceID and CreatedBy set by the caller) and
// stores it, filling in its ID and CreatedAt. A queryId that names no saved
// query of the workspace is refused as a field, like any other.
func (s *Service) Create(ctx context.Context, a *analytics.Annotation) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := s.Store.CreateAnnotation(ctx, a); err != nil {
		if errors.Is(err, analytics.ErrNotFound) {
			return analytics.InvalidField("queryId", "there is no saved query %d in this workspace", *a.QueryID)
		}
		return err
	}
	return nil
}

// Page is one page of a list of annotations, as the API answers it.
type Page struct {
	Items    []analytics.Annotation `json:"items"`
	Page     int                    `json:"page"`
	PageSize int                    `json:"pageSize"`
	Total    int                    `json:"total"`
}

// List returns page (from 1) of the annotations f selects, size to a page
// (the caller checked both against MaxPage and MaxPageSize), newest first,
// with the total over all pages. Items is [] when the page is empty, never
// nil.
func (s *Service) List(ctx context.Context, f analytics.AnnotationFilter, page, size int) (Page, error) {
	items, total, err := s.Store.ListAnnotations(ctx, f, (page-1)*size, size)
	if err != nil {
		return Page{}, err
	}
	if items == nil {
		items = []analytics.Annotation{}
	}
	return Page{Items: items, Page: page, PageSize: size, Total: total}, nil
}

// Each calls fn for every annotation f selects, in the order of List,
// without holding them all in memory: what an export streams.
func (s *Service) Each(ctx context.Context, f analytics.AnnotationFilter, fn func(analytics.Annotation) error) error {
	return s.Store.EachAnnotation(ctx, f, fn)
}

// Delete removes the workspace's annotation id at once: there is no soft
// delete and no undo.
func (s *Service) Delete(ctx context.Context, workspaceID, id int64) error {
	if err := s.Store.DeleteAnnotation(ctx, workspaceID, id); err != nil {
		if errors.Is(err, analytics.ErrNotFound) {
			return ErrNotFound
		}
		return err
	}
	return nil
}

// DeleteMany removes the workspace's annotations among ids (1 to
// MaxBulkDelete positive ids; nil is a list left out) and returns how many
// it removed. Ids that are unknown or belong to another workspace are
// skipped silently, so the count is all a caller learns and it says nothing
// about other workspaces.
func (s *Service) DeleteMany(ctx context.Context, workspaceID int64, ids []int64) (int, error) {
	if ids == nil {
		return 0, analytics.InvalidField("ids", "is required")
	}
	if n := len(ids); n < 1 || n > MaxBulkDelete {
		return 0, analytics.InvalidField("ids", "must list 1 to %d ids, not %d", MaxBulkDelete, n)
	}
	for i, id := range ids {
		if id < 1 {
			return 0, analytics.InvalidField(fmt.Sprintf("ids[%d]", i), "must be a positive integer, not %d", id)
		}
	}
	return s.Store.DeleteAnnotations(ctx, workspaceID, ids)
}
