/* outcome.c - the codec of a call's outcome, the body of a RESULT frame: JSON with every
 * field of struct run_outcome the worker knows (images as base64 PNG). The worker is hostile: ipc_outcome_decode
 * checks size, depth, trailing bytes, UTF-8 and every field's type. Functions return 0 or a
 * negative errno; out-params are written only on success. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipc.h"

static int put(json_object *obj, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

static int put_null(json_object *obj, const char *key)
{
	return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
}

/* ---- Encoding (in the worker) -------------------------------------------------------- */

/* s[0..n) as a JSON string, every byte kept (NUL too: JSON escapes it), but with every
 * invalid UTF-8 sequence replaced by U+FFFD, so that the frame always decodes. NULL on
 * ENOMEM or beyond IPC_FRAME_MAX. */
static json_object *utf8_string(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	struct text clean = {0};
	json_object *str;
	size_t i = 0, k;

	if (n > IPC_FRAME_MAX)
		return NULL;
	for (i = 0; i < n; i += k) {
		k = proto_utf8_seq(p + i, n - i);
		if (k == 0)
			break;
	}
	if (i == n)
		return json_object_new_string_len(s, (int)n);
	if (text_set_utf8(&clean, s, n) < 0)
		return NULL;
	str = json_object_new_string_len(clean.s, (int)clean.len);
	text_clear(&clean);
	return str;
}

static int put_text(json_object *obj, const char *key, const struct text *t)
{
	return put(obj, key, utf8_string(t->s ? t->s : "", t->len));
}

static int put_text_or_null(json_object *obj, const char *key, const struct text *t)
{
	return t->s ? put_text(obj, key, t) : put_null(obj, key);
}

static int put_error(json_object *obj, const struct run_outcome *o)
{
	json_object *err;
	int rc;

	if (!o->error_type.s && !o->error_message.s && !o->error_traceback.s)
		return put_null(obj, "error");
	err = json_object_new_object();
	rc = put(obj, "error", err);
	if (rc == 0)
		rc = put_text(err, "type", &o->error_type);
	if (rc == 0)
		rc = put_text(err, "message", &o->error_message);
	if (rc == 0)
		rc = put_text(err, "traceback", &o->error_traceback);
	return rc;
}

/* "images": [{"width": w, "height": h, "png": base64}, ...] */
static int put_images(json_object *obj, const struct run_outcome *o)
{
	json_object *arr = json_object_new_array();
	int rc = put(obj, "images", arr);

	for (size_t i = 0; rc == 0 && i < o->n_images; i++) {
		const struct run_image *im = &o->images[i];
		json_object *e = json_object_new_object();
		char *b64 = proto_base64_encode(im->png, im->len);
		rc = e && b64 ? json_object_array_add(arr, e) : -ENOMEM;
		if (rc < 0) {
			json_object_put(e);
		} else {
			rc = put(e, "width", json_object_new_int64(im->width));
			if (rc == 0)
				rc = put(e, "height", json_object_new_int64(im->height));
			if (rc == 0)
				rc = put(e, "png", json_object_new_string(b64));
		}
		free(b64);
	}
	return rc;
}

char *ipc_outcome_encode(const struct run_outcome *o, size_t *len)
{
	json_object *obj;
	const char *json;
	char *copy = NULL;
	size_t n;
	int rc;

	obj = json_object_new_object();
	if (!obj)
		return NULL;
	rc = put(obj, "status", json_object_new_string(run_status_name(o->status)));
	if (rc == 0)
		rc = put_text(obj, "stdout", &o->stdout_text);
	if (rc == 0)
		rc = put_text(obj, "stderr", &o->stderr_text);
	if (rc == 0)
		rc = put_text(obj, "logs", &o->logs);
	if (rc == 0)
		rc = o->result ? put(obj, "result", json_object_get(o->result))
		               : put_null(obj, "result");
	if (rc == 0)
		rc = put_text_or_null(obj, "result_repr", &o->result_repr);
	if (rc == 0)
		rc = put_error(obj, o);
	if (rc == 0)
		rc = put(obj, "truncated", json_object_new_boolean(o->truncated));
	if (rc == 0 && o->n_images > 0)
		rc = put_images(obj, o);
	if (rc == 0 && o->threads > 0)
		rc = put(obj, "threads", json_object_new_int(o->threads));
	if (rc < 0)
		goto out;
	json = json_object_to_json_string_length(
	    obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (!json)
		goto out;
	copy = malloc(n + 1);
	if (!copy)
		goto out;
	memcpy(copy, json, n + 1);
	*len = n;
out:
	json_object_put(obj);
	return copy;
}

/* ---- Decoding (in the supervisor) ---------------------------------------------------- */

/* A copy of the string obj[key], any character (NUL included), into *out; left absent when
 * the value is null and nullable. Returns 0, -EINVAL or -ENOMEM. */
static int take_string(json_object *obj, const char *key, int nullable, struct text *out)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		return -EINVAL;
	if (!v && nullable)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	return text_set(out, json_object_get_string(v), (size_t)json_object_get_string_len(v));
}

static int take_status(json_object *obj, enum run_status *out)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(obj, "status", &v) ||
	    !json_object_is_type(v, json_type_string))
		return -EINVAL;
	return run_status_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v),
	                        out);
}

static int take_error(json_object *obj, struct run_outcome *o)
{
	json_object *err = NULL;
	int rc;

	if (!json_object_object_get_ex(obj, "error", &err))
		return -EINVAL;
	if (!err)
		return 0;
	if (!json_object_is_type(err, json_type_object))
		return -EINVAL;
	rc = take_string(err, "type", 0, &o->error_type);
	if (rc == 0)
		rc = take_string(err, "message", 0, &o->error_message);
	if (rc == 0)
		rc = take_string(err, "traceback", 0, &o->error_traceback);
	return rc;
}

/* obj["images"], when there: at most RUN_IMAGES_MAX objects of exactly width, height (what
 * the PNG's header says, at most RUN_IMAGE_SIDE_MAX) and png (canonical base64 of a PNG of at
 * most RUN_IMAGE_BYTES_MAX bytes), RUN_IMAGES_BYTES_MAX in all. */
static int take_images(json_object *obj, struct run_outcome *o)
{
	json_object *arr = NULL;
	size_t n, total = 0;

	if (!json_object_object_get_ex(obj, "images", &arr))
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return -EINVAL;
	n = json_object_array_length(arr);
	if (n > RUN_IMAGES_MAX)
		return -EINVAL;
	o->images = n ? calloc(n, sizeof(*o->images)) : NULL;
	if (n && !o->images)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *w = NULL, *h = NULL, *p = NULL;
		struct run_image *im = &o->images[i];
		uint32_t pw, ph;
		int rc;

		if (!json_object_is_type(e, json_type_object) ||
		    json_object_object_length(e) != 3 ||
		    !json_object_object_get_ex(e, "width", &w) ||
		    !json_object_object_get_ex(e, "height", &h) ||
		    !json_object_object_get_ex(e, "png", &p) ||
		    !json_object_is_type(w, json_type_int) ||
		    !json_object_is_type(h, json_type_int) ||
		    !json_object_is_type(p, json_type_string) ||
		    (size_t)json_object_get_string_len(p) > (RUN_IMAGE_BYTES_MAX + 2) / 3 * 4)
			return -EINVAL;
		rc = proto_base64_decode(json_object_get_string(p),
		                         (size_t)json_object_get_string_len(p), &im->png, &im->len);
		if (rc < 0)
			return rc;
		o->n_images = i + 1;
		total += im->len;
		if (im->len > RUN_IMAGE_BYTES_MAX || total > RUN_IMAGES_BYTES_MAX ||
		    run_image_png_size(im->png, im->len, &pw, &ph) < 0 || pw > RUN_IMAGE_SIDE_MAX ||
		    ph > RUN_IMAGE_SIDE_MAX || json_object_get_int64(w) != (int64_t)pw ||
		    json_object_get_int64(h) != (int64_t)ph)
			return -EINVAL;
		im->width = pw;
		im->height = ph;
	}
	return 0;
}

/* Does the JSON text hold more than max values (counted by the brackets and commas outside its
 * strings: an upper bound for the members of its arrays and objects)? A worker's own outcome
 * holds few: its result is at most 64 KiB of JSON (worker.h, max_result), its other members a
 * handful each. A claim of millions of values would have the supervisor build a tree of them:
 * seconds of its loop, shared by every call, and hundreds of MiB. */
static int values_over(const char *buf, size_t len, size_t max)
{
	size_t n = 0;
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (buf[i] == '\\')
				i++;
			else if (buf[i] == '"')
				in_string = 0;
		} else if (buf[i] == '"') {
			in_string = 1;
		} else if ((buf[i] == '[' || buf[i] == '{' || buf[i] == ',') && ++n > max) {
			return 1;
		}
	}
	return 0;
}

int ipc_outcome_decode(const char *buf, size_t len, struct run_outcome *out)
{
	json_object *root = NULL, *v = NULL;
	struct run_outcome o;
	int rc;

	run_outcome_init(&o);
	if (len > IPC_FRAME_MAX || values_over(buf, len, IPC_OUTCOME_VALUES_MAX))
		return -EINVAL;
	rc = proto_parse(buf, len, &root);
	if (rc < 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	rc = -EINVAL;
	if (!json_object_is_type(root, json_type_object))
		goto out;
	rc = take_status(root, &o.status);
	if (rc == 0)
		rc = take_string(root, "stdout", 0, &o.stdout_text);
	if (rc == 0)
		rc = take_string(root, "stderr", 0, &o.stderr_text);
	if (rc == 0)
		rc = take_string(root, "logs", 0, &o.logs);
	if (rc == 0)
		rc = take_string(root, "result_repr", 1, &o.result_repr);
	if (rc == 0)
		rc = take_error(root, &o);
	if (rc == 0) {
		if (json_object_object_get_ex(root, "truncated", &v) &&
		    json_object_is_type(v, json_type_boolean))
			o.truncated = json_object_get_boolean(v);
		else
			rc = -EINVAL;
	}
	if (rc == 0)
		rc = take_images(root, &o);
	if (rc == 0 && json_object_object_get_ex(root, "threads", &v)) {
		int64_t n = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;

		if (n < 0 || n > RUN_THREADS_MAX)
			rc = -EINVAL;
		else
			o.threads = (int)n;
	}
	if (rc < 0)
		goto out;
	/* Optional and any JSON value; it outlives root through its own reference. */
	if (json_object_object_get_ex(root, "result", &v))
		o.result = json_object_get(v);
	*out = o;
	run_outcome_init(&o);
out:
	run_outcome_clear(&o);
	json_object_put(root);
	return rc;
}
