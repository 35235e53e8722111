from blog.posts import Post

BASE = "/posts/"


def post_url(post: Post) -> str:
    return BASE + post.slug
