"""The viewer's routes, one module per group, each a ``routes(site)`` that
makes its :class:`starlette.routing.Route` list from the shared
:class:`elelem.web.site.Site`:

- :mod:`elelem.web.routes.views`: the pages (the listing, a conversation,
  a new chat);
- :mod:`elelem.web.routes.talk`: the chat API (a turn, a resume after
  approvals);
- :mod:`elelem.web.routes.ui_chat`: a stock ``useChat`` page's backend
  (a turn, the approvals it answered);
- :mod:`elelem.web.routes.render`: Markdown rendered for the chat script;
- :mod:`elelem.web.routes.static`: the stylesheet and the script;
- :mod:`elelem.web.routes.blobs`: an image of the store opened whole;
- :mod:`elelem.web.routes.frames`: a grounded search's suggestions, a
  sandboxed frame's document.
"""
