package storage

// The Storage part of an Emulator Suite export, as firebase-tools writes
// and reads it:
//
//	storage_export/buckets.json        {"buckets": [{"id": name}]}
//	storage_export/metadata/<f>.json   one object's metadata, the Storage
//	                                   emulator's StoredFileMetadata JSON
//	storage_export/blobs/<f>           its bytes
//
// firebase-tools names <f> after the blob's file on its disk; an import
// walks metadata/ (any depth) and pairs each file with the blob at the same
// relative path, so the older layout (<bucket>/<object>) imports too.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pyric/pyric/sandbox/service"
)

// exportDir is Storage's directory in an export.
const exportDir = "storage_export"

// MaxExportFile bounds one file read from an export (an object's bytes
// or metadata).
const MaxExportFile = 1 << 30

// NewState implements service.TypedState.
func (e *Engine) NewState() any { return &State{} }

// Describe implements service.Describer.
func (e *Engine) Describe() string {
	return "Cloud Storage: every object's metadata by bucket and name (a capture leaves the bytes out)."
}

// CaptureState implements service.Capturer: what the rules see of each
// object, not its bytes — a capture is rewritten on every flush, and
// uploads must not make each rewrite cost their size.
func (e *Engine) CaptureState() (json.RawMessage, error) {
	objs := e.Objects()
	if objs == nil {
		objs = []*Object{}
	}
	return json.Marshal(map[string]any{"objects": objs})
}

// Export implements service.Exporter.
func (e *Engine) Export(root string) (service.ExportEntry, error) {
	st, err := e.Snapshot()
	if err != nil {
		return service.ExportEntry{}, err
	}
	if err := exportStorage(st, e.Buckets(), root); err != nil {
		return service.ExportEntry{}, err
	}
	return service.ExportEntry{Path: exportDir}, nil
}

// ImportState implements service.Importer: the objects are restored with
// the other services' states, then the buckets the export lists are
// created.
func (e *Engine) ImportState(dir string) (json.RawMessage, func() error, error) {
	st, buckets, err := readStorageExport(dir)
	if err != nil {
		return nil, nil, err
	}
	finish := func() error {
		for _, b := range buckets {
			if err := e.CreateBucket(b); err != nil {
				return fmt.Errorf("storage import: bucket %s: %w", b, err)
			}
		}
		return nil
	}
	return st, finish, nil
}

// storedFile is the Storage emulator's StoredFileMetadata JSON.
type storedFile struct {
	Name               string            `json:"name"`
	Bucket             string            `json:"bucket"`
	Metageneration     json.Number       `json:"metageneration"`
	Generation         json.Number       `json:"generation"`
	ContentType        string            `json:"contentType,omitempty"`
	StorageClass       string            `json:"storageClass,omitempty"`
	ContentDisposition string            `json:"contentDisposition,omitempty"`
	CacheControl       string            `json:"cacheControl,omitempty"`
	ContentLanguage    string            `json:"contentLanguage,omitempty"`
	ContentEncoding    string            `json:"contentEncoding,omitempty"`
	DownloadTokens     []string          `json:"downloadTokens"`
	ETag               string            `json:"etag,omitempty"`
	CustomMetadata     map[string]string `json:"customMetadata,omitempty"`
	TimeCreated        string            `json:"timeCreated"`
	Updated            string            `json:"updated"`
	Size               json.Number       `json:"size"`
	MD5Hash            string            `json:"md5Hash"`
	// CRC32C is the checksum as a decimal number (firebase-tools' form),
	// not GCS's base64.
	CRC32C string `json:"crc32c"`
}

// diskName is an object's file name in the export: stable across
// exports of the same object, and a plain file name whatever the object's
// name holds.
func diskName(bucket, name string) string {
	h := sha256.Sum256([]byte(bucket + "\x00" + name))
	return hex.EncodeToString(h[:16])
}

// exportStorage writes storage_export/ from the storage service's
// snapshot state.
func exportStorage(state json.RawMessage, buckets []string, dir string) error {
	var s State
	if len(state) > 0 {
		if err := json.Unmarshal(state, &s); err != nil {
			return fmt.Errorf("storage export: %w", err)
		}
	}
	root := filepath.Join(dir, exportDir)
	for _, d := range []string{"blobs", "metadata"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	type bucketID struct {
		ID string `json:"id"`
	}
	list := struct {
		Buckets []bucketID `json:"buckets"`
	}{Buckets: []bucketID{}}
	add := func(b string) {
		if !seen[b] {
			seen[b] = true
			list.Buckets = append(list.Buckets, bucketID{b})
		}
	}
	for _, b := range buckets {
		add(b)
	}
	for i := range s.Objects {
		o := &s.Objects[i]
		add(o.Bucket)
		f := storedFileOf(&o.Object, o.Data)
		js, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		dn := diskName(o.Bucket, o.Name)
		if err := writeAtomic(filepath.Join(root, "blobs", dn), o.Data); err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(root, "metadata", dn+".json"), js); err != nil {
			return err
		}
	}
	js, _ := json.MarshalIndent(list, "", "  ")
	return writeAtomic(filepath.Join(root, "buckets.json"), js)
}

func storedFileOf(o *Object, data []byte) storedFile {
	f := storedFile{Name: o.Name, Bucket: o.Bucket, Metageneration: json.Number(strconv.FormatInt(o.Metageneration, 10)),
		Generation: json.Number(strconv.FormatInt(o.Generation, 10)), ContentType: o.ContentType, StorageClass: o.StorageClass(),
		ContentDisposition: o.ContentDisposition, CacheControl: o.CacheControl, ContentLanguage: o.ContentLanguage,
		ContentEncoding: o.ContentEncoding, DownloadTokens: o.DownloadTokens(), ETag: o.ETag(),
		CustomMetadata: o.CustomMetadata(), TimeCreated: o.TimeCreated.UTC().Format(time.RFC3339Nano),
		Updated: o.Updated.UTC().Format(time.RFC3339Nano), Size: json.Number(strconv.Itoa(len(data))), MD5Hash: o.MD5Hash}
	if f.DownloadTokens == nil {
		f.DownloadTokens = []string{}
	}
	if len(f.CustomMetadata) == 0 {
		f.CustomMetadata = nil
	}
	if b, err := base64.StdEncoding.DecodeString(o.CRC32C); err == nil && len(b) == 4 {
		f.CRC32C = strconv.FormatUint(uint64(binary.BigEndian.Uint32(b)), 10)
	}
	return f
}

// decodeStoredFile parses one metadata file into the object it describes
// (bytes not included).
func decodeStoredFile(data []byte) (*Object, error) {
	var f storedFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if f.Name == "" || f.Bucket == "" {
		return nil, errors.New("name and bucket are required")
	}
	if err := ValidateBucket(f.Bucket); err != nil {
		return nil, err
	}
	if err := ValidateName(f.Name); err != nil {
		return nil, err
	}
	o := &Object{Bucket: f.Bucket, Name: f.Name, ContentType: f.ContentType, ContentDisposition: f.ContentDisposition,
		CacheControl: f.CacheControl, ContentLanguage: f.ContentLanguage, ContentEncoding: f.ContentEncoding}
	num := func(n json.Number, field string) (int64, error) {
		if n == "" {
			return 0, nil
		}
		// firebase-tools writes generations as milliseconds, which JSON
		// may carry as floats.
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		fl, err := n.Float64()
		if err != nil || fl < 0 || fl > 1<<62 {
			return 0, fmt.Errorf("%s: %q is not a whole number", field, n)
		}
		return int64(fl), nil
	}
	var err error
	if o.Generation, err = num(f.Generation, "generation"); err != nil {
		return nil, err
	}
	if o.Metageneration, err = num(f.Metageneration, "metageneration"); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		s   string
		dst *time.Time
	}{{f.TimeCreated, &o.TimeCreated}, {f.Updated, &o.Updated}} {
		if t.s == "" {
			continue
		}
		if *t.dst, err = time.Parse(time.RFC3339Nano, t.s); err != nil {
			return nil, fmt.Errorf("timeCreated/updated: %v", err)
		}
	}
	tokens := append([]string(nil), f.DownloadTokens...)
	if len(f.CustomMetadata) > 0 {
		o.Metadata = map[string]string{}
		for k, v := range f.CustomMetadata {
			if k == TokenKey {
				tokens = append(tokens, strings.Split(v, ",")...)
				continue
			}
			o.Metadata[k] = v
		}
	}
	var kept []string
	dup := map[string]bool{}
	for _, t := range tokens {
		if t = strings.TrimSpace(t); t != "" && !dup[t] {
			dup[t] = true
			kept = append(kept, t)
		}
	}
	if len(kept) > 0 {
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		o.Metadata[TokenKey] = strings.Join(kept, ",")
	}
	return o, nil
}

// readStorageExport reads storage_export/ into the storage service's
// snapshot state and the buckets it lists.
func readStorageExport(dir string) (json.RawMessage, []string, error) {
	var buckets []string
	if data, err := os.ReadFile(filepath.Join(dir, "buckets.json")); err == nil {
		var list struct {
			Buckets []struct {
				ID string `json:"id"`
			} `json:"buckets"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", service.ErrExport, filepath.Join(dir, "buckets.json"), err)
		}
		for i, b := range list.Buckets {
			if err := ValidateBucket(b.ID); err != nil {
				return nil, nil, fmt.Errorf("%w: %s: buckets[%d]: %v", service.ErrExport, filepath.Join(dir, "buckets.json"), i, err)
			}
			buckets = append(buckets, b.ID)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	mdDir, blobDir := filepath.Join(dir, "metadata"), filepath.Join(dir, "blobs")
	objs := []StateObject{}
	err := filepath.WalkDir(mdDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == mdDir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		data, err := readBounded(p)
		if err != nil {
			return err
		}
		o, err := decodeStoredFile(data)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", service.ErrExport, p, err)
		}
		rel, _ := filepath.Rel(mdDir, p)
		blob := filepath.Join(blobDir, strings.TrimSuffix(rel, ".json"))
		body, err := readBounded(blob)
		if err != nil {
			return fmt.Errorf("%w: the bytes of %s/%s (%s): %v", service.ErrExport, o.Bucket, o.Name, blob, err)
		}
		objs = append(objs, StateObject{Object: *o, Data: body})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].Bucket != objs[j].Bucket {
			return objs[i].Bucket < objs[j].Bucket
		}
		return objs[i].Name < objs[j].Name
	})
	st, err := json.Marshal(State{Objects: objs})
	return st, buckets, err
}

func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", service.ErrExport, err)
	}
	if st.Size() > MaxExportFile {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", service.ErrExport, path, st.Size(), MaxExportFile)
	}
	return os.ReadFile(path)
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var (
	_ service.TypedState = (*Engine)(nil)
	_ service.Capturer   = (*Engine)(nil)
	_ service.Exporter   = (*Engine)(nil)
	_ service.Importer   = (*Engine)(nil)
	_ service.Describer  = (*Engine)(nil)
)
