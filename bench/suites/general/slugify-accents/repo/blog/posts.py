from dataclasses import dataclass, field

from blog.text import slugify


@dataclass
class Post:
    title: str
    body: str
    slug: str = ""


@dataclass
class Blog:
    posts: list[Post] = field(default_factory=list)

    def publish(self, title: str, body: str) -> Post:
        base = slugify(title) or "post"
        taken = {p.slug for p in self.posts}
        slug, n = base, 2
        while slug in taken:
            slug, n = f"{base}-{n}", n + 1
        post = Post(title, body, slug)
        self.posts.append(post)
        return post

    def find(self, slug: str) -> Post | None:
        return next((p for p in self.posts if p.slug == slug), None)
